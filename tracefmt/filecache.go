package tracefmt

import (
	"os"
	"sync"
	"time"
)

// FileCache keeps what a format read of the last file it was asked about,
// for as long as the file keeps its size and modification time: Discover
// and Open ask a format about a file once for its processes and once per
// process, and a format whose files must be read whole (or scanned first)
// would read them again each time. The zero value is ready; it is safe for
// concurrent use.
type FileCache[T any] struct {
	mu   sync.Mutex
	key  fileKey
	full bool
	val  T
	err  error
}

type fileKey struct {
	path string
	size int64
	mod  time.Time
}

// Get returns load(path)'s result, from the cache when path is the file
// of the last call and has not changed since.
func (c *FileCache[T]) Get(path string, load func(string) (T, error)) (T, error) {
	fi, err := os.Stat(path)
	if err != nil {
		var zero T
		return zero, err
	}
	key := fileKey{path, fi.Size(), fi.ModTime()}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.full && c.key == key {
		return c.val, c.err
	}
	c.val, c.err = load(path)
	c.key, c.full = key, true
	return c.val, c.err
}
