package main

import (
	"strconv"
	"strings"
	"unicode"
)

// termSafe returns s with every control character (and other non-printable
// rune) escaped as Go escapes it in a quoted string ("\x1b", "\r", "\u2028"),
// so that a file name or message cannot move the cursor, clear the screen
// or set the terminal's title. Printable text, UTF-8 included, is kept.
func termSafe(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) && r != ' ' }) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if unicode.IsPrint(r) || r == ' ' {
			b.WriteRune(r)
			continue
		}
		q := strconv.QuoteRune(r) // 'x' with x escaped
		b.WriteString(q[1 : len(q)-1])
	}
	return b.String()
}
