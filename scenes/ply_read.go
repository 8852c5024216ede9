package scenes

// Reading a PLY body item by item: ascii tokens or binary scalars of
// either byte order, and skipping elements the scene does not use.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math"
)

// skipBinary skips a binary element the scene does not use.
func (p *plyParser) skipBinary(e *plyElement) error {
	fixed := 0
	hasList := false
	for _, pr := range e.props {
		if pr.countType != plyNone {
			hasList = true
		}
		fixed += pr.typ.size()
	}
	if !hasList {
		total := e.count * int64(fixed)
		n, err := p.br.Discard(int(total))
		p.off += int64(n)
		if err != nil {
			return parseErr(p.name, 0, "byte offset %d: element %s truncated: %v", p.off, e.name, err)
		}
		return nil
	}
	for k := int64(0); k < e.count; k++ {
		for _, pr := range e.props {
			if pr.countType == plyNone {
				if _, err := p.scalar(pr.typ); err != nil {
					return p.itemErr(e, k, err)
				}
				continue
			}
			cnt, err := p.scalar(pr.countType)
			if err != nil {
				return p.itemErr(e, k, err)
			}
			if cnt < 0 || cnt > maxPLYCount {
				return p.itemErr(e, k, fmt.Errorf("list %s: bad length %v", pr.name, cnt))
			}
			total := int(cnt) * pr.typ.size()
			n, err := p.br.Discard(total)
			p.off += int64(n)
			if err != nil {
				return p.itemErr(e, k, fmt.Errorf("truncated: %v", err))
			}
		}
	}
	return nil
}

// beginItem starts one element instance: in ascii files, reads its line.
func (p *plyParser) beginItem() error {
	if p.format != plyASCII {
		return nil
	}
	for {
		ln, err := p.br.ReadSlice(p.eol)
		if err == bufio.ErrBufferFull {
			p.buf = append(p.buf[:0], ln...)
			for err == bufio.ErrBufferFull {
				if int64(len(p.buf)) > p.lim.MaxLine {
					return lineLimit(p.lim)
				}
				ln, err = p.br.ReadSlice(p.eol)
				p.buf = append(p.buf, ln...)
			}
			ln = p.buf
		}
		if err != nil && err != io.EOF {
			return err
		}
		if len(ln) == 0 && err == io.EOF {
			return fmt.Errorf("unexpected end of file")
		}
		p.line++
		p.toks = p.toks[:0]
		rest := ln
		for {
			var tok []byte
			tok, rest = nextTokenNoComment(rest)
			if len(tok) == 0 {
				break
			}
			p.toks = append(p.toks, tok)
		}
		if len(p.toks) > 0 {
			return nil
		}
		if err == io.EOF {
			return fmt.Errorf("unexpected end of file")
		}
	}
}

// endItem checks an ascii element line was used up.
func (p *plyParser) endItem() error {
	if p.format == plyASCII && len(p.toks) > 0 {
		return fmt.Errorf("%d extra values on the line", len(p.toks))
	}
	return nil
}

func nextTokenNoComment(b []byte) (tok, rest []byte) {
	i := 0
	for i < len(b) && (isSpace(b[i]) || b[i] == '\n') {
		i++
	}
	j := i
	for j < len(b) && !isSpace(b[j]) && b[j] != '\n' {
		j++
	}
	return b[i:j], b[j:]
}

// scalar reads one value of type t as float64 (every PLY type fits exactly).
func (p *plyParser) scalar(t plyType) (float64, error) {
	if p.format == plyASCII {
		if len(p.toks) == 0 {
			return 0, fmt.Errorf("too few values on the line")
		}
		tok := p.toks[0]
		p.toks = p.toks[1:]
		if t.isInt() {
			v, ok := parseInt(tok)
			if !ok {
				return 0, fmt.Errorf("malformed integer %q", clip(tok))
			}
			return float64(v), nil
		}
		if t == plyF64 {
			f, ok := parseFloat64(tok)
			if !ok {
				return 0, fmt.Errorf("malformed number %q", clip(tok))
			}
			return f, nil
		}
		f, ok := parseFloat32(tok)
		if !ok {
			return 0, fmt.Errorf("malformed number %q", clip(tok))
		}
		return float64(f), nil
	}
	n := t.size()
	b := p.scratch[:n]
	if _, err := io.ReadFull(p.br, b); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return 0, fmt.Errorf("unexpected end of file")
		}
		return 0, err // a limit of the input
	}
	p.off += int64(n)
	var bo binary.ByteOrder = binary.LittleEndian
	if p.format == plyBE {
		bo = binary.BigEndian
	}
	switch t {
	case plyI8:
		return float64(int8(b[0])), nil
	case plyU8:
		return float64(b[0]), nil
	case plyI16:
		return float64(int16(bo.Uint16(b))), nil
	case plyU16:
		return float64(bo.Uint16(b)), nil
	case plyI32:
		return float64(int32(bo.Uint32(b))), nil
	case plyU32:
		return float64(bo.Uint32(b)), nil
	case plyF32:
		return float64(math.Float32frombits(bo.Uint32(b))), nil
	default:
		return math.Float64frombits(bo.Uint64(b)), nil
	}
}
