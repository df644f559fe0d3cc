package transcripttest

import (
	"bufio"
	"os"
)

// StdlibLines calls fn with each line of the file at path, read with
// bufio.Scanner alone: the reading half of the standard-library baselines
// the benchmarks run beside reel's readers. The line is valid until fn
// returns.
func StdlibLines(path string, fn func(line []byte) error) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		if err := fn(sc.Bytes()); err != nil {
			return err
		}
	}
	return sc.Err()
}
