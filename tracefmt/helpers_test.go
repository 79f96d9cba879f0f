package tracefmt

import (
	"bufio"
	"bytes"

	"github.com/klauspost/compress/zstd"
)

func newBufReader(data []byte) *bufio.Reader { return bufio.NewReader(bytes.NewReader(data)) }

func newTestEncoder() (*zstd.Encoder, error) { return zstd.NewWriter(nil) }
