package storage

import (
	"io"
	"sync"
)

// readAhead reads from a slow source (a gzip stream) in its own goroutine,
// so decompression overlaps parsing.
type readAhead struct {
	full  chan chunk
	free  chan []byte
	stop  chan struct{}
	once  sync.Once
	wg    sync.WaitGroup
	cur   []byte // unread part of the chunk being consumed
	buf   []byte // the chunk cur belongs to, returned to free when done
	err   error
	ended bool
}

type chunk struct {
	data []byte
	err  error
}

const (
	readAheadChunk  = 1 << 20
	readAheadChunks = 4
)

func newReadAhead(r io.Reader) *readAhead {
	ra := &readAhead{
		full: make(chan chunk, readAheadChunks),
		free: make(chan []byte, readAheadChunks),
		stop: make(chan struct{}),
	}
	for i := 0; i < readAheadChunks; i++ {
		ra.free <- make([]byte, readAheadChunk)
	}
	ra.wg.Add(1)
	go func() {
		defer ra.wg.Done()
		defer close(ra.full)
		for {
			var b []byte
			select {
			case b = <-ra.free:
			case <-ra.stop:
				return
			}
			// Fill the chunk; keep the source's own error (a truncated
			// gzip stream reports io.ErrUnexpectedEOF).
			n := 0
			var err error
			for n < len(b) && err == nil {
				var k int
				k, err = r.Read(b[n:])
				n += k
			}
			select {
			case ra.full <- chunk{b[:n], err}:
			case <-ra.stop:
				return
			}
			if err != nil {
				return
			}
		}
	}()
	return ra
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.buf != nil {
			ra.free <- ra.buf[:cap(ra.buf)]
			ra.buf = nil
		}
		if ra.ended {
			return 0, ra.err
		}
		c, ok := <-ra.full
		if !ok {
			ra.ended = true
			if ra.err == nil {
				ra.err = io.EOF
			}
			continue
		}
		ra.buf, ra.cur = c.data, c.data
		if c.err != nil {
			ra.ended, ra.err = true, c.err
		}
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// Close stops the reading goroutine and waits for it.
func (ra *readAhead) Close() {
	ra.once.Do(func() { close(ra.stop) })
	ra.wg.Wait()
}
