package scenes

import "fmt"

// ParseError reports malformed input. Line is the 1-based line of the
// statement for text formats (OBJ, ASCII PLY and STL). For binary PLY and STL,
// where there are no lines, Line is 0 and Msg names the byte offset or the
// element index instead.
type ParseError struct {
	File string // name given to the loader (path for Load)
	Line int    // 1-based line, 0 when not applicable
	Msg  string // what was wrong
	Err  error  // the cause when there is one (a *LimitError), else nil
}

// Unwrap returns the cause (errors.As(err, &limitErr) finds a limit).
func (e *ParseError) Unwrap() error { return e.Err }

// Error returns "file:line: msg", or "file: msg" when there is no line.
func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

func parseErr(file string, line int, format string, args ...any) *ParseError {
	return &ParseError{File: file, Line: line, Msg: fmt.Sprintf(format, args...)}
}
