package pack

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Limits on what one pack may hold, so that a hostile archive (a
// decompression bomb, millions of entries) fails cleanly instead of
// filling the disk.
const (
	maxArchive   = 100 << 20 // a downloaded or local archive (AWF's limit)
	maxPackBytes = 200 << 20 // all files of a pack, uncompressed
	maxPackFiles = 20000
)

// budget counts what is written into a pack against the limits.
type budget struct{ bytes, files int64 }

func (b *budget) add(n int64) error {
	b.bytes += n
	b.files++
	if b.bytes > maxPackBytes {
		return fmt.Errorf("the pack's files exceed %d bytes", int64(maxPackBytes))
	}
	if b.files > maxPackFiles {
		return fmt.Errorf("the pack holds more than %d files", maxPackFiles)
	}
	return nil
}

// localPath checks an archive entry's name and returns where it goes
// below dir: a relative path that stays inside.
func localPath(dir, name string) (string, error) {
	clean := filepath.Clean(filepath.FromSlash(strings.TrimPrefix(name, "./")))
	if clean == "." {
		return dir, nil
	}
	if filepath.IsAbs(clean) || !filepath.IsLocal(clean) {
		return "", fmt.Errorf("archive entry %q leaves the pack directory", name)
	}
	return filepath.Join(dir, clean), nil
}

// fileMode is the mode a pack's file gets: executable for everyone when
// any execute bit was set, otherwise readable.
func fileMode(m fs.FileMode) fs.FileMode {
	if m&0o111 != 0 {
		return 0o755
	}
	return 0o644
}

// extract writes a .tar.gz archive into dir, which exists. Entries that
// would leave dir are an error; entries that are neither files nor
// directories (links, devices) are skipped and named in skipped.
func extract(data []byte, dir string) (skipped []string, err error) {
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, fmt.Errorf("read archive: not gzip: %w", err)
	}
	defer zr.Close()
	tr := tar.NewReader(zr)
	var b budget
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read archive: %w", err)
		}
		dst, err := localPath(dir, h.Name)
		if err != nil {
			return nil, err
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return nil, err
			}
		case tar.TypeReg:
			if err := b.add(h.Size); err != nil {
				return nil, err
			}
			if err := writeFile(dst, tr, h.Size, fileMode(h.FileInfo().Mode())); err != nil {
				return nil, err
			}
		case tar.TypeXGlobalHeader, tar.TypeXHeader:
		default:
			skipped = append(skipped, h.Name)
		}
	}
	return skipped, nil
}

// writeFile writes exactly size bytes of r to path.
func writeFile(path string, r io.Reader, size int64, mode fs.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	n, err := io.Copy(f, io.LimitReader(r, size))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = fmt.Errorf("%s: archive entry cut short (%d of %d bytes)", path, n, size)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return os.Chmod(path, mode)
}

// copyTree copies a pack's source directory into dir, which exists. What
// a source checkout holds beside the pack (top-level dot entries such as
// .git, a previous state.json) is left out; entries that are neither
// files nor directories are skipped and named in skipped.
func copyTree(src, dir string) (skipped []string, err error) {
	var b budget
	err = filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if rel == "." {
			return nil
		}
		if !strings.Contains(rel, string(filepath.Separator)) && (strings.HasPrefix(rel, ".") || rel == StateFile) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		dst := filepath.Join(dir, rel)
		switch {
		case d.IsDir():
			return os.MkdirAll(dst, 0o755)
		case d.Type().IsRegular():
			fi, err := d.Info()
			if err != nil {
				return err
			}
			if err := b.add(fi.Size()); err != nil {
				return err
			}
			f, err := os.Open(path)
			if err != nil {
				return err
			}
			defer f.Close()
			return writeFile(dst, f, fi.Size(), fileMode(fi.Mode()))
		default:
			skipped = append(skipped, rel)
			return nil
		}
	})
	if err != nil {
		return nil, fmt.Errorf("copy %s: %w", src, err)
	}
	return skipped, nil
}

// packRoot is where the manifest sits in an unpacked source: dir itself,
// or the one directory dir holds when the archive wraps the pack in a
// top-level folder (as GitHub's source archives do).
func packRoot(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, ManifestFile)); err == nil {
		return dir
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return dir
	}
	var only string
	for _, e := range entries {
		if !e.IsDir() || only != "" {
			return dir
		}
		only = e.Name()
	}
	if only == "" {
		return dir
	}
	if _, err := os.Stat(filepath.Join(dir, only, ManifestFile)); err == nil {
		return filepath.Join(dir, only)
	}
	return dir
}
