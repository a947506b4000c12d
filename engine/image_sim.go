package engine

import (
	"context"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/experimental"
)

// compileNode compiles one node's module. Unless plain is set it takes the image path
// (image.go): it compiles the module without its data segments and returns an allocator
// whose memories start as the segments' image. Where that is not possible (the module
// does something the image does not reproduce, or the platform has no memfd) it compiles
// the module as it is, with the plain mmap allocator; imageErr says why.
func (s *Sim) compileNode(ctx context.Context, data []byte, plain bool) (m wazero.CompiledModule, alloc experimental.MemoryAllocator, imageErr, err error) {
	if !plain {
		img, ierr := buildImage(data)
		if ierr == nil {
			a, closer, aerr := imageMemoryAllocator(img)
			if aerr == nil {
				m, cerr := s.rt.CompileModule(ctx, img.wasm)
				if cerr == nil {
					s.closers = append(s.closers, closer)
					return m, a, nil, nil
				}
				closer()
				ierr = cerr
			} else {
				ierr = aerr
			}
		}
		imageErr = ierr
	}
	m, err = s.rt.CompileModule(ctx, data)
	return m, memoryAllocator(), imageErr, err
}

// imagePath reports, per module in AllNodes order, whether it instantiates from a memory
// image (nil) or why not.
func (s *Sim) imagePath() []error { return s.imageErrs }
