package scenes

import (
	"math"
	"strconv"
	"testing"
)

// checkFloat compares parseFloat32 with strconv.ParseFloat(s, 32): same
// bits when strconv accepts (overflow included), rejection when it reports a
// syntax error.
func checkFloat(t *testing.T, s string) {
	t.Helper()
	got, ok := parseFloat32([]byte(s))
	want, err := strconv.ParseFloat(s, 32)
	if err != nil {
		if ne := err.(*strconv.NumError); ne.Err == strconv.ErrSyntax {
			if ok {
				t.Fatalf("parseFloat32(%q) = %v, ok; strconv: %v", s, got, err)
			}
			return
		}
	}
	if !ok {
		t.Fatalf("parseFloat32(%q) rejected; strconv gives %v (err %v)", s, want, err)
	}
	w := float32(want)
	if math.Float32bits(got) != math.Float32bits(w) && !(got != got && w != w) {
		t.Fatalf("parseFloat32(%q) = %v (%#x), strconv %v (%#x)", s, got, math.Float32bits(got), w, math.Float32bits(w))
	}
}

func TestParseFloat32Edge(t *testing.T) {
	for _, s := range []string{
		"0", "-0", "+0", "0.0", "-0.0", "1", "+1", "-1", "1.", ".5", "-.5", ".8e-1", "1e-05", "1E5", "1e+5",
		"0.1", "0.2", "0.3", "3.14159265358979323846", "123456789", "16777217", "16777216", "16777218",
		"1.00000005960464477539", "1.0000000596046448", "1.00000017881393432617", // float32 midpoints
		"3.4028234663852886e38", "3.4028235e38", "3.5e38", "1e39", "-1e39", "1e-38", "1.17549435e-38",
		"1e-45", "1.4e-45", "7e-46", "1e-50", "8219.830078", "-105.342712", "0.000001", "1e22", "1e23",
		"9007199254740993", "9007199254740992", "123456789012345678901234567890", "0.000000000000000000000000001",
		"0x1p-2", "0x1.8p1", "inf", "-inf", "Inf", "infinity", "nan", "NaN", "1.#INF", "1.#IND",
		"", "+", "-", ".", "e5", "1e", "1e+", "1.2.3", "1..2", "--1", "+-1", "1e5.5", "1_000", "0x", "abc", " 1", "1 ",
		"00000000000000000000000001.5", "1.50000000000000000000000000", "1e-0000005", "1e0000000000000000000005",
		"4.5e-44", "2.5e-45", "0.00000000000000000000000000000000000001",
	} {
		checkFloat(t, s)
	}
}

func TestParseFloat32Random(t *testing.T) {
	r := rng{42}
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.next()%10)
		}
		return string(b)
	}
	for i := 0; i < 200000; i++ {
		var s string
		switch r.next() % 6 {
		case 0: // typical OBJ coordinate
			s = digits(int(1+r.next()%5)) + "." + digits(int(1+r.next()%7))
		case 1: // exponent form
			s = digits(1) + "." + digits(int(r.next()%9)) + "e" + strconv.Itoa(int(r.next()%90)-45)
		case 2: // random float32 printed shortest
			s = strconv.FormatFloat(float64(math.Float32frombits(uint32(r.next()))), 'g', -1, 32)
		case 3: // random float32 printed with 9 digits (round trip)
			s = strconv.FormatFloat(float64(math.Float32frombits(uint32(r.next()))), 'e', 8, 32)
		case 4: // float32 midpoints written exactly
			f := math.Float32frombits(uint32(r.next()) & 0x7f7fffff)
			next := math.Nextafter32(f, float32(math.Inf(1)))
			mid := (float64(f) + float64(next)) / 2
			s = strconv.FormatFloat(mid, 'g', -1, 64)
		default: // long digit strings
			s = digits(int(1+r.next()%25)) + "." + digits(int(r.next()%25))
		}
		if r.next()%3 == 0 {
			s = "-" + s
		}
		checkFloat(t, s)
	}
}

func TestParseInt(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true}, {"1", 1, true}, {"-1", -1, true}, {"+7", 7, true}, {"123456", 123456, true},
		{"", 0, false}, {"-", 0, false}, {"+", 0, false}, {"1.0", 0, false}, {"1a", 0, false},
		{"1099511627776", 1 << 40, true}, {"1099511627777", 0, false}, {"99999999999999999999999", 0, false},
	} {
		got, ok := parseInt([]byte(c.in))
		if ok != c.ok || got != c.want {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
