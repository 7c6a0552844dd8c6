package gmailfake

import (
	"bytes"
	"io"
	"mime/quotedprintable"
)

func quotedPrintable(b []byte) io.Reader { return quotedprintable.NewReader(bytes.NewReader(b)) }
