//go:build !(linux && (amd64 || arm64))

package engine

import (
	"errors"

	"github.com/tetratelabs/wazero/experimental"
)

// imageMemoryAllocator: copy-on-write images need memfd and MAP_FIXED; elsewhere every
// module takes the plain path.
func imageMemoryAllocator(*memImage) (experimental.MemoryAllocator, func(), error) {
	return nil, nil, errors.New("memory images are only implemented on linux/amd64 and linux/arm64")
}
