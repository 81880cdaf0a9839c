package api

import (
	"bytes"
	"io"

	"github.com/gin-gonic/gin"
)

// What the replay guard needs around a handler: the body it read given back
// with the same error, and a copy of the answer as it is written.

// errorReader returns its error once the body's bytes are read (nil: EOF).
type errorReader struct{ err error }

func (r errorReader) Read([]byte) (int, error) {
	if r.err != nil {
		return 0, r.err
	}
	return 0, io.EOF
}

// answerRecorder keeps a copy of the answer as it is written.
type answerRecorder struct {
	gin.ResponseWriter
	buf      bytes.Buffer
	overflow bool
}

func (w *answerRecorder) keep(b []byte) {
	if w.overflow || w.buf.Len()+len(b) > maxStoredAnswer {
		w.overflow = true
		return
	}
	w.buf.Write(b)
}

// Write keeps all of b, also when the client has gone: the answer is the
// handler's, whoever still listens.
func (w *answerRecorder) Write(b []byte) (int, error) {
	w.keep(b)
	return w.ResponseWriter.Write(b)
}

func (w *answerRecorder) WriteString(s string) (int, error) {
	w.keep([]byte(s))
	return w.ResponseWriter.WriteString(s)
}
