package engine

import (
	"context"
	"time"

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
		t0 := time.Now()
		img, ierr := buildImage(data)
		if ierr == nil {
			a, closer, aerr := imageMemoryAllocator(img)
			s.addTime(&s.ImageTime, time.Since(t0))
			if aerr == nil {
				t1 := time.Now()
				m, cerr := s.rt.CompileModule(ctx, img.wasm)
				s.addTime(&s.WazeroTime, time.Since(t1))
				if cerr == nil {
					s.prepMu.Lock()
					s.closers = append(s.closers, closer)
					s.prepMu.Unlock()
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
	t1 := time.Now()
	m, err = s.rt.CompileModule(ctx, data)
	s.addTime(&s.WazeroTime, time.Since(t1))
	return m, memoryAllocator(), imageErr, err
}

// imagePath reports, per module in AllNodes order, whether it instantiates from a memory
// image (nil) or why not.
func (s *Sim) imagePath() []error { return s.imageErrs }

// addTime adds d to one of the preparation timings; modules compile concurrently.
func (s *Sim) addTime(t *time.Duration, d time.Duration) {
	s.prepMu.Lock()
	*t += d
	s.prepMu.Unlock()
}
