package winsim

import (
	"context"
	"io"
	"io/fs"
	"os"
	"strings"

	"github.com/pkg/sftp"
)

// sftpFS serves the virtual disk over SFTP with the path forms Windows
// OpenSSH uses: "/C:/Users/x" is C:\Users\x; relative paths start in the
// administrator's profile.
// ctx carries the session's token (uac.go).
type sftpFS struct {
	h   *Host
	ctx context.Context
}

func (h *Host) sftpHandlers(ctx context.Context) sftp.Handlers {
	s := sftpFS{h, ctx}
	return sftp.Handlers{FileGet: s, FilePut: s, FileCmd: s, FileList: s}
}

func (s sftpFS) win(p string) string {
	p = strings.TrimPrefix(p, "/")
	if len(p) >= 2 && p[1] == ':' {
		return s.h.fs.Clean(p)
	}
	return s.h.fs.Clean(`\` + p)
}

func (s sftpFS) Fileread(r *sftp.Request) (io.ReaderAt, error) {
	if err := s.h.checkRead(s.ctx, s.win(r.Filepath)); err != nil {
		return nil, os.ErrPermission
	}
	f, err := os.Open(s.h.fs.resolve(s.win(r.Filepath)))
	if err != nil {
		return nil, os.ErrNotExist
	}
	return f, nil
}

func (s sftpFS) Filewrite(r *sftp.Request) (io.WriterAt, error) {
	if err := s.h.checkWrite(s.ctx, s.win(r.Filepath)); err != nil {
		return nil, os.ErrPermission
	}
	f, err := s.h.fs.OpenWrite(s.win(r.Filepath), false)
	if err != nil {
		return nil, err
	}
	return f, nil
}

func (s sftpFS) Filecmd(r *sftp.Request) error {
	for _, p := range []string{r.Filepath, r.Target} {
		if p != "" && s.h.checkWrite(s.ctx, s.win(p)) != nil {
			return os.ErrPermission
		}
	}
	fsys := s.h.fs
	switch r.Method {
	case "Setstat":
		if r.AttrFlags().Size {
			return os.Truncate(fsys.resolve(s.win(r.Filepath)), int64(r.Attributes().Size))
		}
		return nil
	case "Rename", "PosixRename":
		return fsys.Move(s.win(r.Filepath), s.win(r.Target), r.Method == "PosixRename")
	case "Rmdir", "Remove":
		if err := fsys.Remove(s.win(r.Filepath), false); err != nil {
			return os.ErrNotExist
		}
		return nil
	case "Mkdir":
		return fsys.MkdirAll(s.win(r.Filepath))
	}
	return sftp.ErrSSHFxOpUnsupported
}

type listerAt []fs.FileInfo

func (l listerAt) ListAt(out []os.FileInfo, off int64) (int, error) {
	if off >= int64(len(l)) {
		return 0, io.EOF
	}
	n := copy(out, l[off:])
	if n < len(out) {
		return n, io.EOF
	}
	return n, nil
}

func (s sftpFS) Filelist(r *sftp.Request) (sftp.ListerAt, error) {
	p := s.win(r.Filepath)
	switch r.Method {
	case "List":
		list, err := s.h.fs.List(p)
		if err != nil {
			return nil, os.ErrNotExist
		}
		return listerAt(list), nil
	case "Stat":
		fi, err := os.Stat(s.h.fs.resolve(p))
		if err != nil {
			return nil, os.ErrNotExist
		}
		return listerAt{fi}, nil
	}
	return nil, sftp.ErrSSHFxOpUnsupported
}
