package platform

import (
	"bytes"
	_ "embed"
	"fmt"
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// The Linux personality: code outside the standard library is built for the simulator
// as it is built for Linux (RATIONALE.md, "The Linux personality").
//
// GOOS=wasip1 selects a package's files for wasip1: a file for linux or unix is left
// out, and a library's own wasip1 stubs (ristretto's mmap_wasip1.go, which returns
// ENOSYS) are taken. The simulator implements the Linux calls those files make, so for
// every package outside the standard library and seedfall's own module the personality
// selects the files GOOS=linux GOARCH=wasm would select, with cgo off, and makes the
// wasip1 build take exactly those:
//
//   - a file Linux takes and wasip1 leaves out has its build constraint blanked (the
//     lines stay, so positions do not move); if its name constrains it
//     (store_linux.go), it is added under a name that does not (store_linux_sf.go) with a
//     //line directive that keeps its own name in positions, and the original is
//     removed;
//   - a file wasip1 takes and Linux leaves out is removed;
//   - where the package declares an identifier only in other architectures' files
//     (bbolt's maxMapSize in bolt_amd64.go, pebble's maxArrayLen), the files of a 64-bit
//     architecture that declare it are taken (amd64's, else arm64's), if they are pure
//     Go: a file that imports "C" or declares a function without a body (assembly) is
//     never taken;
//   - golang.org/x/sys/unix, whose Linux files call the kernel through assembly, gets
//     the Linux system call entry points of this layer (files/personality): what the
//     host implements works as on Linux, the rest returns ENOSYS with a trace line that
//     names the call. Its errno constants take wasip1's numbers, so that an error from
//     it compares equal to the same error from package os and syscall.
//
// The result is a set of file contents keyed by absolute path, as the ports give, with
// Removed marking a file to leave out; internal/build applies them through the build
// overlay or patched module copies.

// Removed is the content the personality gives a file it removes from the build. No Go
// source file can hold it (it starts with a NUL byte).
var Removed = []byte("\x00seedfall: removed by the Linux personality\x00")

// IsRemoved reports whether content marks a removed file.
func IsRemoved(content []byte) bool { return bytes.Equal(content, Removed) }

// PersonalityVersion changes whenever what the personality does changes (the build
// cache's key includes it through Fingerprint).
const PersonalityVersion = "linux-personality-v1"

//go:embed files/personality/xsys_unix.go.txt
var xsysPersonality []byte

// xsysAddedName is the file the personality adds to golang.org/x/sys/unix.
const xsysAddedName = "seedfall_personality.go"

// renameSuffix is added to a file whose name constrains it to Linux or an architecture.
const renameSuffix = "_sf"

// SeedfallModule is seedfall's own module: its packages (sim, simtest, the net overlay's
// helpers) are written for wasip1 and never take the personality.
const SeedfallModule = "github.com/seedfall/seedfall"

// Pkg is one package of a build, as the personality needs it.
type Pkg struct {
	ImportPath string
	Dir        string
	Module     Module
	Standard   bool
	// Tests: the package's _test.go files are built too (the package under go test -c).
	Tests bool
}

// Context is what file selection depends on besides the files.
type Context struct {
	Tags      []string // the build's -tags
	GoVersion string   // the building toolchain's version: "go1.26.8"
	GOROOT    string   // the building toolchain's GOROOT (syscall's errno numbers)
	// Keep are packages (import paths) that keep wasip1's files: their Linux files did
	// not build (internal/build tries again without them).
	Keep map[string]bool
}

// PersonalityResult is the personality's answer for a set of packages.
type PersonalityResult struct {
	// Files are the changed, added and removed files, keyed by absolute path.
	Files map[string][]byte
	// Imports are the packages outside the standard library that the files taken
	// import and the build's package list may lack: their packages take the personality
	// too (Personality is called again with them).
	Imports []string
	// Changed names, per package import path, what the personality did, for errors.
	Changed map[string][]string
}

// Applies reports whether package p takes the personality: every package outside the
// standard library and seedfall's own module.
func Applies(p Pkg) bool {
	if p.Standard || p.Dir == "" {
		return false
	}
	mp := p.Module.Path
	return mp != SeedfallModule
}

func (c Context) contexts() (linux, wasip1 build.Context, amd64, arm64 build.Context) {
	base := build.Context{
		Compiler:   "gc",
		CgoEnabled: false,
		BuildTags:  append([]string(nil), c.Tags...),
	}
	minor := 0
	if v, ok := strings.CutPrefix(c.GoVersion, "go1."); ok {
		v, _, _ = strings.Cut(v, ".")
		v, _, _ = strings.Cut(v, "rc")
		minor, _ = strconv.Atoi(v)
	}
	if minor == 0 {
		// The toolchain running seedfall's.
		base.ReleaseTags = build.Default.ReleaseTags
	} else {
		for i := 1; i <= minor; i++ {
			base.ReleaseTags = append(base.ReleaseTags, "go1."+strconv.Itoa(i))
		}
	}
	mk := func(goos, goarch string) build.Context {
		ctx := base
		ctx.GOOS, ctx.GOARCH = goos, goarch
		return ctx
	}
	return mk("linux", "wasm"), mk("wasip1", "wasm"), mk("linux", "amd64"), mk("linux", "arm64")
}

// fillArches are the 64-bit architectures whose pure-Go files may stand in for a
// missing wasm file, in the order tried.
var fillArches = []string{"amd64", "arm64"}

// Personality returns the files the Linux personality changes for pkgs.
func Personality(pkgs []Pkg, c Context) (*PersonalityResult, error) {
	res := &PersonalityResult{Files: map[string][]byte{}, Changed: map[string][]string{}}
	linuxCtx, wasipCtx, amdCtx, armCtx := c.contexts()
	seen := map[string]bool{}
	tests := map[string]bool{}
	for _, p := range pkgs {
		tests[p.Dir] = tests[p.Dir] || p.Tests
	}
	var errnos map[string]int
	type read struct {
		p     Pkg
		files []*goFile
	}
	var all []read
	names := map[string]string{}
	for _, p := range pkgs {
		if !Applies(p) || seen[p.Dir] || c.Keep[p.ImportPath] {
			continue
		}
		seen[p.Dir] = true
		p.Tests = tests[p.Dir]
		files, err := readPkg(p, linuxCtx, wasipCtx)
		if err != nil {
			return nil, fmt.Errorf("%s: Linux personality: package %s: %w", Name, p.ImportPath, err)
		}
		for _, f := range files {
			if f.file != nil && !f.test {
				names[p.ImportPath] = f.file.Name.Name
			}
		}
		all = append(all, read{p, files})
	}
	ext := map[string]map[string]bool{}
	for _, r := range all {
		externalUses(r.files, names, ext)
	}
	for _, r := range all {
		p := r.p
		xsys := p.ImportPath == "golang.org/x/sys/unix"
		if xsys && errnos == nil {
			var err error
			if errnos, err = wasip1Errnos(c.GOROOT); err != nil {
				return nil, err
			}
		}
		pr, err := selectPkg(p, r.files, ext[p.ImportPath], map[string]build.Context{"amd64": amdCtx, "arm64": armCtx}, xsys)
		if err != nil {
			return nil, fmt.Errorf("%s: Linux personality: package %s: %w", Name, p.ImportPath, err)
		}
		for _, f := range pr.files {
			content := f.content
			if xsys && content != nil && !IsRemoved(content) {
				content = xsysTransform(content, errnos)
			} else if xsys && content == nil && !f.remove {
				data, err := os.ReadFile(f.src)
				if err != nil {
					return nil, err
				}
				if t := xsysTransform(data, errnos); !bytes.Equal(t, data) {
					content = t
				}
			}
			if f.remove {
				content = Removed
			}
			if content != nil {
				res.Files[f.dst] = content
				if f.dst != f.src && !f.remove {
					res.Files[f.src] = Removed
				}
			}
		}
		if xsys {
			res.Files[filepath.Join(p.Dir, xsysAddedName)] = xsysPersonality
		}
		if len(pr.notes) > 0 {
			res.Changed[p.ImportPath] = pr.notes
		}
		for _, imp := range pr.imports {
			if !slices.Contains(res.Imports, imp) {
				res.Imports = append(res.Imports, imp)
			}
		}
	}
	slices.Sort(res.Imports)
	return res, nil
}

// fileChange is one file of a package as the personality leaves it.
type fileChange struct {
	src, dst string // dst differs from src for a renamed file
	content  []byte // nil: unchanged (for x/sys/unix: may still be transformed)
	remove   bool
}

type pkgSelection struct {
	files   []fileChange
	imports []string
	notes   []string
}

// goFile is one .go file of a package directory, parsed.
type goFile struct {
	name      string
	data      []byte
	file      *ast.File // nil if it does not parse (left to the compiler)
	test      bool
	cgo       bool
	bodyless  bool // declares a function without a body
	linux     bool // Linux (linux/wasm) selects it
	wasip1    bool // wasip1 selects it
	archTaken string
}

func readGoFile(dir, name string) (*goFile, error) {
	path := filepath.Join(dir, name)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	f := &goFile{name: name, data: data, test: strings.HasSuffix(name, "_test.go")}
	af, err := parser.ParseFile(token.NewFileSet(), path, data, parser.SkipObjectResolution)
	if err == nil {
		f.file = af
		for _, imp := range af.Imports {
			if imp.Path.Value == `"C"` {
				f.cgo = true
			}
		}
		for _, d := range af.Decls {
			if fd, ok := d.(*ast.FuncDecl); ok && fd.Body == nil {
				f.bodyless = true
			}
		}
	}
	return f, nil
}

// readPkg reads and parses the .go files of p's directory and says which of them Linux
// and wasip1 select.
func readPkg(p Pkg, linuxCtx, wasipCtx build.Context) ([]*goFile, error) {
	ents, err := os.ReadDir(p.Dir)
	if err != nil {
		return nil, err
	}
	var files []*goFile
	for _, e := range ents {
		name := e.Name()
		if e.IsDir() || !strings.HasSuffix(name, ".go") || strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			continue
		}
		if strings.HasSuffix(name, "_test.go") && !p.Tests {
			continue
		}
		f, err := readGoFile(p.Dir, name)
		if err != nil {
			return nil, err
		}
		if f.linux, err = linuxCtx.MatchFile(p.Dir, name); err != nil {
			return nil, err
		}
		if f.wasip1, err = wasipCtx.MatchFile(p.Dir, name); err != nil {
			return nil, err
		}
		if f.cgo {
			f.linux, f.wasip1 = false, false
		}
		files = append(files, f)
	}
	return files, nil
}

// externalUses adds, for each package the Linux-selected files import, the names they
// use from it (pkg.Name), keyed by import path. names gives a package's name where it is
// known (the last element of its path otherwise).
func externalUses(files []*goFile, names map[string]string, out map[string]map[string]bool) {
	for _, f := range files {
		if !f.linux || f.file == nil {
			continue
		}
		local := map[string]string{}
		for _, imp := range f.file.Imports {
			path, _ := strconv.Unquote(imp.Path.Value)
			name := names[path]
			if name == "" {
				name = path[strings.LastIndex(path, "/")+1:]
			}
			if imp.Name != nil {
				name = imp.Name.Name
			}
			local[name] = path
		}
		ast.Inspect(f.file, func(n ast.Node) bool {
			if se, ok := n.(*ast.SelectorExpr); ok {
				if id, ok := se.X.(*ast.Ident); ok {
					if path, ok := local[id.Name]; ok {
						if out[path] == nil {
							out[path] = map[string]bool{}
						}
						out[path][se.Sel.Name] = true
					}
				}
			}
			return true
		})
	}
}

// selectPkg decides p's files: Linux's, and a 64-bit architecture's where identifiers
// that p's files or its importers (ext) use are declared only there.
func selectPkg(p Pkg, files []*goFile, ext map[string]bool, archCtx map[string]build.Context, xsys bool) (*pkgSelection, error) {
	sel := &pkgSelection{}
	// linux/wasm is no real platform: a Linux file may declare what a wasm file that
	// wasip1 selects too declares (x/sys/cpu's archInit in cpu_linux.go and cpu_wasm.go).
	// The wasm file wins; the Linux file is left out.
	both := map[string]bool{}
	for _, f := range files {
		if f.linux && f.wasip1 {
			for _, n := range declNames(f.file) {
				both[n] = true
			}
		}
	}
	for _, f := range files {
		if !f.linux || f.wasip1 {
			continue
		}
		for _, n := range declNames(f.file) {
			if both[n] {
				f.linux = false
				sel.notes = append(sel.notes, fmt.Sprintf("%s left out: it declares %s, which a file for wasm declares too", f.name, n))
				break
			}
		}
	}
	fill(files, p, ext, archCtx, xsys)

	for _, f := range files {
		take := f.linux || f.archTaken != ""
		src := filepath.Join(p.Dir, f.name)
		switch {
		case take && f.wasip1:
			sel.files = append(sel.files, fileChange{src: src, dst: src})
		case take:
			content := blankConstraints(f.data)
			dst := src
			if !nameAllows(f.name, "wasip1", "wasm") {
				dst = filepath.Join(p.Dir, renamed(f.name))
				// The //line directive names the file where it was, so that positions
				// (and -trimpath's rewriting of them) are those of the original.
				content = append([]byte("//line "+src+":1\n"), content...)
			}
			sel.files = append(sel.files, fileChange{src: src, dst: dst, content: content})
			why := "Linux's file"
			if f.archTaken != "" {
				why = f.archTaken + "'s file, for identifiers wasm lacks"
			}
			sel.notes = append(sel.notes, fmt.Sprintf("%s taken (%s)", f.name, why))
			for _, imp := range f.file.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				if !isStdPath(path) && !slices.Contains(sel.imports, path) {
					sel.imports = append(sel.imports, path)
				}
			}
		case f.wasip1:
			sel.files = append(sel.files, fileChange{src: src, dst: src, remove: true})
			sel.notes = append(sel.notes, fmt.Sprintf("%s left out (Linux does not build it)", f.name))
		}
	}
	return sel, nil
}

// fill marks the pure-Go files of a 64-bit architecture that declare identifiers the
// Linux files use and nothing Linux selects declares (f.archTaken).
func fill(files []*goFile, p Pkg, ext map[string]bool, archCtx map[string]build.Context, xsys bool) {
	declared := map[string]bool{}
	used := map[string]bool{}
	for n := range ext {
		used[n] = true
	}
	any := false
	for _, f := range files {
		if f.linux && !f.test {
			any = true
			for _, n := range topLevelNames(f.file) {
				declared[n] = true
			}
			usedNames(f.file, used)
		}
	}
	for _, arch := range fillArches {
		ctx := archCtx[arch]
		var cands []*goFile
		for _, f := range files {
			if f.linux || f.archTaken != "" || f.test || f.cgo || f.file == nil || (f.bodyless && !xsys) {
				continue
			}
			if ok, err := ctx.MatchFile(p.Dir, f.name); err == nil && ok {
				cands = append(cands, f)
			}
		}
		for changed := true; changed; {
			changed = false
			for _, f := range cands {
				if f.archTaken != "" {
					continue
				}
				names := topLevelNames(f.file)
				wanted := !any // a package with no file for wasm at all takes the architecture's
				clash := false
				for _, n := range names {
					if declared[n] {
						clash = true
					}
					if used[n] {
						wanted = true
					}
				}
				if !wanted || clash {
					continue
				}
				f.archTaken = arch
				changed = true
				for _, n := range names {
					declared[n] = true
				}
				usedNames(f.file, used)
			}
		}
	}
}

// topLevelNames are the identifiers a file declares at package level (methods and the
// blank identifier are not).
func topLevelNames(f *ast.File) []string {
	if f == nil {
		return nil
	}
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name != "init" && d.Name.Name != "_" {
				out = append(out, d.Name.Name)
			}
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					out = append(out, s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out = append(out, n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

// declNames are topLevelNames and the methods a file declares ("T.M").
func declNames(f *ast.File) []string {
	out := topLevelNames(f)
	if f == nil {
		return out
	}
	for _, d := range f.Decls {
		if fd, ok := d.(*ast.FuncDecl); ok && fd.Recv != nil && len(fd.Recv.List) == 1 {
			t := fd.Recv.List[0].Type
			if st, ok := t.(*ast.StarExpr); ok {
				t = st.X
			}
			if ix, ok := t.(*ast.IndexExpr); ok {
				t = ix.X
			}
			if ix, ok := t.(*ast.IndexListExpr); ok {
				t = ix.X
			}
			if id, ok := t.(*ast.Ident); ok {
				out = append(out, id.Name+"."+fd.Name.Name)
			}
		}
	}
	return out
}

// usedNames adds the unqualified identifiers a file mentions (a superset of the
// package-level names it uses: locals and field names count too).
func usedNames(f *ast.File, used map[string]bool) {
	if f == nil {
		return
	}
	for _, d := range f.Decls {
		ast.Inspect(d, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.SelectorExpr:
				ast.Inspect(n.X, func(m ast.Node) bool {
					if id, ok := m.(*ast.Ident); ok {
						used[id.Name] = true
					}
					return true
				})
				return false
			case *ast.Ident:
				used[n.Name] = true
			}
			return true
		})
	}
}

// blankConstraints replaces the build constraint lines of a Go file's header with
// empty lines.
func blankConstraints(data []byte) []byte {
	lines := bytes.SplitAfter(data, []byte("\n"))
	for i, l := range lines {
		t := bytes.TrimSpace(l)
		if bytes.HasPrefix(t, []byte("package ")) {
			break
		}
		if bytes.HasPrefix(t, []byte("//go:build")) || bytes.HasPrefix(t, []byte("// +build")) {
			nl := []byte("\n")
			if !bytes.HasSuffix(l, nl) {
				nl = nil
			}
			lines[i] = nl
		}
	}
	return bytes.Join(lines, nil)
}

// knownOS and knownArch are the operating systems and architectures the go command
// recognizes in file names (go help buildconstraint).
var knownOS = strings.Fields("aix android darwin dragonfly freebsd hurd illumos ios js linux nacl netbsd openbsd plan9 solaris wasip1 windows zos")
var knownArch = strings.Fields("386 amd64 amd64p32 arm armbe arm64 arm64be loong64 mips mipsle mips64 mips64le mips64p32 mips64p32le ppc ppc64 ppc64le riscv riscv64 s390 s390x sparc sparc64 wasm")

// nameAllows reports whether a file's name lets it build for goos/goarch (its
// _GOOS, _GOARCH or _GOOS_GOARCH suffix).
func nameAllows(name, goos, goarch string) bool {
	name, _, _ = strings.Cut(name, ".")
	i := strings.Index(name, "_")
	if i < 0 {
		return true
	}
	l := strings.Split(name[i:], "_")
	if n := len(l); n > 0 && l[n-1] == "test" {
		l = l[:n-1]
	}
	n := len(l)
	osOK := func(s string) bool {
		return s == goos || (goos == "android" && s == "linux") || (goos == "illumos" && s == "solaris") || (goos == "ios" && s == "darwin")
	}
	if n >= 2 && slices.Contains(knownOS, l[n-2]) && slices.Contains(knownArch, l[n-1]) {
		return osOK(l[n-2]) && l[n-1] == goarch
	}
	if n >= 1 && slices.Contains(knownOS, l[n-1]) {
		return osOK(l[n-1])
	}
	if n >= 1 && slices.Contains(knownArch, l[n-1]) {
		return l[n-1] == goarch
	}
	return true
}

// renamed is the name a name-constrained file is added under: renameSuffix before
// "_test.go" or ".go", which ends the name with an element the go command does not
// read as an OS or architecture.
func renamed(name string) string {
	if base, ok := strings.CutSuffix(name, "_test.go"); ok {
		return base + renameSuffix + "_test.go"
	}
	return strings.TrimSuffix(name, ".go") + renameSuffix + ".go"
}

// OriginalName is the file name a renamed file came from ("" if name is not one).
func OriginalName(name string) string {
	if base, ok := strings.CutSuffix(name, renameSuffix+"_test.go"); ok {
		return base + "_test.go"
	}
	if base, ok := strings.CutSuffix(name, renameSuffix+".go"); ok {
		return base + ".go"
	}
	return ""
}

// isStdPath reports whether an import path is the standard library's (no dot in its
// first element).
func isStdPath(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".") && path != "C"
}

var errnoLine = regexp.MustCompile(`(?m)^(\s*E[A-Z0-9]+)(\s*=\s*)(?:syscall\.)?Errno\((0x[0-9a-fA-F]+|[0-9]+)\)`)

// wasip1Errnos reads the errno numbers of wasip1's package syscall from the toolchain.
func wasip1Errnos(goroot string) (map[string]int, error) {
	data, err := os.ReadFile(filepath.Join(goroot, "src", "syscall", "tables_wasip1.go"))
	if err != nil {
		return nil, fmt.Errorf("%s: the Linux personality reads wasip1's errno numbers: %w", Name, err)
	}
	re := regexp.MustCompile(`(?m)^\s*(E[A-Z0-9]+)\s+Errno\s*=\s*([0-9]+)`)
	out := map[string]int{}
	for _, m := range re.FindAllSubmatch(data, -1) {
		n, _ := strconv.Atoi(string(m[2]))
		out[string(m[1])] = n
	}
	if len(out) < 20 {
		return nil, fmt.Errorf("%s: found only %d errno numbers in %s/src/syscall/tables_wasip1.go", Name, len(out), goroot)
	}
	out["EWOULDBLOCK"] = out["EAGAIN"]
	return out, nil
}

// xsysErrnoBase is added to a Linux errno number that wasip1 has no errno of that name
// for, so that it collides with none of wasip1's.
const xsysErrnoBase = 0x1000

// xsysTransform rewrites one file of golang.org/x/sys/unix for the personality: errno
// constants take wasip1's numbers, and each function declared without a body (its
// assembly or linkname target does not exist for wasip1) gets one: the system call
// entry points call this layer's, the rest return ENOSYS after a trace line. Lines do
// not move.
func xsysTransform(data []byte, errnos map[string]int) []byte {
	out := errnoLine.ReplaceAllFunc(data, func(m []byte) []byte {
		sm := errnoLine.FindSubmatch(m)
		name := strings.TrimSpace(string(sm[1]))
		if _, ok := errnos[name]; ok {
			return []byte(string(sm[1]) + string(sm[2]) + "syscall." + name)
		}
		n, err := strconv.ParseInt(string(sm[3]), 0, 64)
		if err != nil {
			return m
		}
		return []byte(fmt.Sprintf("%s%ssyscall.Errno(%#x)", sm[1], sm[2], xsysErrnoBase+n))
	})
	if !bytes.Contains(out, []byte("\nfunc ")) {
		return out
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", out, parser.ParseComments|parser.SkipObjectResolution)
	if err != nil {
		return out
	}
	// wasip1's syscall.Signal is a uint8: Linux's "no signal" (-1) is its largest value.
	var repl [][2]int
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body == nil || fd.Type.Results == nil || len(fd.Type.Results.List) != 1 || exprString(fd.Type.Results.List[0].Type) != "syscall.Signal" {
			continue
		}
		ast.Inspect(fd.Body, func(n ast.Node) bool {
			if r, ok := n.(*ast.ReturnStmt); ok && len(r.Results) == 1 {
				if u, ok := r.Results[0].(*ast.UnaryExpr); ok && u.Op == token.SUB {
					if b, ok := u.X.(*ast.BasicLit); ok && b.Value == "1" {
						repl = append(repl, [2]int{fset.PositionFor(u.Pos(), false).Offset, fset.PositionFor(u.End(), false).Offset})
					}
				}
			}
			return true
		})
	}
	if len(repl) > 0 {
		for i := len(repl) - 1; i >= 0; i-- {
			r := repl[i]
			out = append(append(append([]byte(nil), out[:r[0]]...), "^syscall.Signal(0)"...), out[r[1]:]...)
		}
		if f, err = parser.ParseFile(fset, "x.go", out, parser.ParseComments|parser.SkipObjectResolution); err != nil {
			return out
		}
	}
	lines := bytes.SplitAfter(out, []byte("\n"))
	changed := false
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Body != nil || fd.Recv != nil {
			continue
		}
		end := fset.PositionFor(fd.End(), false).Line - 1
		if fset.PositionFor(fd.Pos(), false).Line-1 != end {
			continue // spans lines: leave it to the compiler's error
		}
		body, entry := bodyFor(fd)
		l := lines[end]
		nl := bytes.HasSuffix(l, []byte("\n"))
		l = bytes.TrimRight(l, "\n")
		l = append(append(append([]byte(nil), l...), " "...), body...)
		if nl {
			l = append(l, '\n')
		}
		lines[end] = l
		changed = true
		// Directives for an external implementation no longer hold; a system call entry
		// point keeps the pointers it is passed as uintptr alive (//go:uintptrescapes).
		if fd.Doc != nil {
			for _, c := range fd.Doc.List {
				ln := fset.PositionFor(c.Pos(), false).Line - 1
				t := strings.TrimSpace(c.Text)
				switch {
				case strings.HasPrefix(t, "//go:linkname"), strings.HasPrefix(t, "//go:noescape"):
					lines[ln] = []byte("\n")
					if entry {
						lines[ln] = []byte("//go:uintptrescapes\n")
						entry = false
					}
				}
			}
		}
		if entry {
			// No directive line to reuse: the entry point is given one on the line
			// before if that line is empty.
			if end > 0 && len(bytes.TrimSpace(lines[end-1])) == 0 {
				lines[end-1] = []byte("//go:uintptrescapes\n")
			}
		}
	}
	if !changed {
		return out
	}
	return bytes.Join(lines, nil)
}

// xsysEntries are x/sys/unix's system call entry points and how the layer's dispatcher
// is called from them.
var xsysEntries = map[string]string{
	"Syscall":           "return seedfallSyscall(trap, a1, a2, a3, 0, 0, 0)",
	"Syscall6":          "return seedfallSyscall(trap, a1, a2, a3, a4, a5, a6)",
	"RawSyscall":        "return seedfallSyscall(trap, a1, a2, a3, 0, 0, 0)",
	"RawSyscall6":       "return seedfallSyscall(trap, a1, a2, a3, a4, a5, a6)",
	"SyscallNoError":    "r1, r2, _ = seedfallSyscall(trap, a1, a2, a3, 0, 0, 0); return",
	"RawSyscallNoError": "r1, r2, _ = seedfallSyscall(trap, a1, a2, a3, 0, 0, 0); return",
}

// bodyFor is the body given a function of x/sys/unix declared without one, and whether
// it is a system call entry point.
func bodyFor(fd *ast.FuncDecl) (string, bool) {
	if call, ok := xsysEntries[fd.Name.Name]; ok && fd.Type.Results != nil {
		named := len(fd.Type.Results.List) > 0 && len(fd.Type.Results.List[0].Names) > 0
		if named || !strings.HasPrefix(call, "r1, r2, _") {
			return "{ " + call + " }", true
		}
	}
	// Every result its zero value, and an error result ENOSYS after the trace line. A
	// function with no error result (vgetrandom's "supported" is false) answers as a
	// kernel without the feature does, with no trace line.
	var vals []string
	errResult := false
	if fd.Type.Results != nil {
		for _, r := range fd.Type.Results.List {
			n := len(r.Names)
			if n == 0 {
				n = 1
			}
			v := "*new(" + exprString(r.Type) + ")"
			switch exprString(r.Type) {
			case "error", "Errno", "syscall.Errno":
				v = "ENOSYS"
				errResult = true
			}
			for i := 0; i < n; i++ {
				vals = append(vals, v)
			}
		}
	}
	ret := "return"
	if len(vals) > 0 {
		ret += " " + strings.Join(vals, ", ")
	}
	if !errResult {
		return "{ " + ret + " }", false
	}
	return fmt.Sprintf("{ seedfallUnsupported(%q); %s }", fd.Name.Name, ret), false
}

func exprString(e ast.Expr) string {
	var b bytes.Buffer
	writeExpr(&b, e)
	return b.String()
}

func writeExpr(b *bytes.Buffer, e ast.Expr) {
	switch e := e.(type) {
	case *ast.Ident:
		b.WriteString(e.Name)
	case *ast.SelectorExpr:
		writeExpr(b, e.X)
		b.WriteString("." + e.Sel.Name)
	case *ast.StarExpr:
		b.WriteString("*")
		writeExpr(b, e.X)
	case *ast.ArrayType:
		b.WriteString("[")
		if e.Len != nil {
			writeExpr(b, e.Len)
		}
		b.WriteString("]")
		writeExpr(b, e.Elt)
	case *ast.BasicLit:
		b.WriteString(e.Value)
	case *ast.InterfaceType:
		b.WriteString("interface{}")
	default:
		b.WriteString("struct{}")
	}
}
