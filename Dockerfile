# The seedfall action's image: the Go toolchain (the action compiles the user's packages
# to wasip1) and the seedfall binary, with the standard library's wasip1 build warmed so
# the first sweep does not pay for it. The image's Go is the newest release; a repository
# whose go.mod has a toolchain line gets that release fetched by the go command
# (docs/action.md, "Which Go builds the nodes").
FROM golang:1.27-bookworm

# GitHub runs the container with HOME=/github/home, which would hide a cache under
# /root: pin the build cache to a path inside the image.
ENV GOCACHE=/var/cache/go-build \
    GOFLAGS=-buildvcs=false

WORKDIR /src/seedfall
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -o /usr/local/bin/seedfall ./cmd/seedfall

# GitHub mounts the workspace owned by the runner user, not by the container's root: git
# (input upgrade-from builds a revision with git archive) refuses such a repository
# without this.
RUN git config --system --add safe.directory '*'

# Warm the build cache for GOOS=wasip1: std, and a hello world through the linker.
RUN GOOS=wasip1 GOARCH=wasm go build std && \
    mkdir -p /tmp/hello && cd /tmp/hello && \
    printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' > main.go && \
    go mod init hello && \
    GOOS=wasip1 GOARCH=wasm go build -trimpath -buildvcs=false -o /dev/null . && \
    rm -rf /tmp/hello

# GitHub runs container actions with the workspace as the working directory.
ENTRYPOINT ["seedfall", "ci"]
