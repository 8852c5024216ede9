package scenes

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strings"
)

// readLine returns the next header line without its terminator. The first
// line fixes the terminator: '\n' (LF or CRLF) unless it ends in a bare
// '\r' (as some CAD exporters write), then '\r'. A line over MaxLine or a
// header over MaxHeader is a limit error.
func (p *plyParser) readLine() (string, error) {
	if p.line == 0 {
		p.eol = firstLineEnd(p.br)
	}
	var ln []byte
	for {
		chunk, err := p.br.ReadSlice(p.eol)
		ln = append(ln, chunk...)
		if int64(len(ln)) > p.lim.MaxLine {
			return "", limitErr(p.name, p.line+1, lineLimit(p.lim))
		}
		if p.off+int64(len(ln)) > p.lim.MaxHeader {
			return "", limitErr(p.name, p.line+1, &LimitError{Field: "MaxHeader", Flag: "--max-header", Limit: p.lim.MaxHeader,
				What: "PLY header longer than the limit"})
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if err != nil && (err != io.EOF || len(ln) == 0) {
			if err == io.EOF {
				return "", p.errf("unexpected end of file in header (no end_header)")
			}
			return "", p.readErr(err)
		}
		break
	}
	p.line++
	p.off += int64(len(ln))
	return strings.TrimRight(string(ln), "\r\n"), nil
}

// firstLineEnd peeks at the start of the input for the first line's end:
// '\r' when it is a bare CR, else '\n'.
func firstLineEnd(br *bufio.Reader) byte {
	head, _ := br.Peek(64)
	i := bytes.IndexAny(head, "\r\n")
	if i >= 0 && head[i] == '\r' && (i+1 >= len(head) || head[i+1] != '\n') {
		return '\r'
	}
	return '\n'
}

// checkDuplicate reports an element name that the header declared before:
// which of the two blocks holds the mesh would be a guess.
func (p *plyParser) checkDuplicate(name string) error {
	for _, e := range p.elems {
		if e.name == name {
			return p.errf("element %s declared twice", clipS(name))
		}
	}
	return nil
}

// readErr is the load's error for a failed read.
func (p *plyParser) readErr(err error) error { return inputErr(p.name, p.line, err) }

// emptyInput returns s with a warning and ok when br holds no byte at all
// (an empty file loads as 0 triangles; anything else must parse).
func emptyInput(br *bufio.Reader, s *Scene) (*Scene, bool) {
	if _, err := br.Peek(1); err != io.EOF {
		return nil, false
	}
	s.Warnings = append(s.Warnings, fmt.Sprintf("%s: empty file: 0 triangles", s.Name))
	return s.finish(), true
}
