package winsim

import (
	"context"
	"errors"
	"io"
	"sync"
)

// maxBufferedStdin bounds the stdin a command has not read yet; Send blocks
// beyond it, which throttles an uploader to the speed of the disk.
const maxBufferedStdin = 8 << 20

var errStdinClosed = errors.New("stdin closed")

// stdinBuffer carries WinRM Send data to a running command. Unlike io.Pipe a
// write does not wait for the reader, so commands that ignore stdin do not
// block the client.
type stdinBuffer struct {
	mu         sync.Mutex
	cond       *sync.Cond
	buf        []byte
	eof        bool // writer sent End
	readClosed bool // command finished or was cancelled
}

func newStdinBuffer() *stdinBuffer {
	b := &stdinBuffer{}
	b.cond = sync.NewCond(&b.mu)
	return b
}

func (b *stdinBuffer) write(ctx context.Context, p []byte) error {
	stop := context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) > maxBufferedStdin && !b.readClosed && ctx.Err() == nil {
		b.cond.Wait()
	}
	if b.readClosed {
		return nil // the command no longer reads: input is discarded, as on Windows
	}
	if b.eof {
		return errStdinClosed
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	b.buf = append(b.buf, p...)
	b.cond.Broadcast()
	return nil
}

func (b *stdinBuffer) closeWrite() {
	b.mu.Lock()
	b.eof = true
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *stdinBuffer) closeRead() {
	b.mu.Lock()
	b.readClosed = true
	b.buf = nil
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *stdinBuffer) Read(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for len(b.buf) == 0 && !b.eof && !b.readClosed {
		b.cond.Wait()
	}
	if len(b.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.buf)
	b.buf = b.buf[n:]
	if len(b.buf) == 0 {
		b.buf = nil
	}
	b.cond.Broadcast()
	return n, nil
}
