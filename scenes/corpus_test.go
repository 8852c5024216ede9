package scenes

import (
	"bufio"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// corpusRow is one line of ../shared/loader-corpus/expected.tsv.
type corpusRow struct {
	file, format   string
	v, fStatements string // may be empty
	polygons       string
	fanTriangles   int
	features       string
	mustFail       bool
}

func readCorpus(t *testing.T) (string, []corpusRow) {
	dir := filepath.Join(sharedDir(t), "loader-corpus")
	f, err := os.Open(filepath.Join(dir, "expected.tsv"))
	if err != nil {
		t.Skipf("corpus absent: %v", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var header []string
	var rows []corpusRow
	for sc.Scan() {
		cols := strings.Split(sc.Text(), "\t")
		if header == nil {
			header = cols
			continue
		}
		get := func(name string) string {
			for i, h := range header {
				if h == name && i < len(cols) {
					return cols[i]
				}
			}
			return ""
		}
		n, err := strconv.Atoi(get("fan_triangles"))
		if err != nil {
			t.Fatalf("expected.tsv: bad fan_triangles in %q", sc.Text())
		}
		feat := get("features")
		fail := false
		for _, w := range strings.Fields(feat) {
			k, _, _ := strings.Cut(w, "=")
			switch k {
			case "zero-idx", "oob-idx", "nonfinite-v", "malformed-number-v":
				fail = true
			}
		}
		rows = append(rows, corpusRow{file: get("file"), format: get("format"), v: get("v"), fStatements: get("f_statements"),
			polygons: get("polygons_ge3"), fanTriangles: n, features: feat, mustFail: fail})
	}
	if len(rows) == 0 {
		t.Fatal("expected.tsv has no rows")
	}
	return dir, rows
}

func TestLoaderCorpus(t *testing.T) {
	dir, rows := readCorpus(t)
	lineRe := regexp.MustCompile(`:[0-9]+: `)
	for _, r := range rows {
		t.Run(r.file, func(t *testing.T) {
			path := filepath.Join(dir, r.file)
			s, err := Load(path)
			if r.mustFail {
				require.Error(t, err, "features %s", r.features)
				var pe *ParseError
				require.True(t, errors.As(err, &pe), "error %T %v", err, err)
				assert.Equal(t, path, pe.File)
				if strings.HasPrefix(r.format, "obj") {
					assert.True(t, pe.Line > 0, "no line in %v", err)
					assert.True(t, lineRe.MatchString(err.Error()), "no :line: in %v", err)
				}
				return
			}
			require.NoError(t, err, "features %s", r.features)
			require.NoError(t, s.Validate())
			assert.Equal(t, r.fanTriangles, len(s.Tris), "triangles")
			if r.v != "" {
				v, _ := strconv.Atoi(r.v)
				assert.Equal(t, v, len(s.Verts), "vertices")
			}
			if strings.HasPrefix(r.format, "stl") {
				assert.Equal(t, 3*len(s.Tris), len(s.Verts), "stl vertices")
			}
			if r.fStatements != "" && r.polygons != "" {
				fs, _ := strconv.Atoi(r.fStatements)
				pg, _ := strconv.Atoi(r.polygons)
				assert.Equal(t, fs, s.Stats.Faces, "faces")
				assert.Equal(t, fs-pg, s.Stats.SkippedFaces, "skipped faces")
			}
			fi, err := os.Stat(path)
			require.NoError(t, err)
			if !strings.HasSuffix(path, ".gz") {
				assert.Equal(t, fi.Size(), s.Stats.Bytes, "bytes")
			}
		})
	}
}

func TestSharedScenes(t *testing.T) {
	dir := filepath.Join(sharedDir(t), "scenes")
	readme, err := os.ReadFile(filepath.Join(dir, "README.md"))
	if err != nil {
		t.Skipf("scenes README absent: %v", err)
	}
	rowRe := regexp.MustCompile(`(?m)^\| *([^ |]+\.(?:obj|ply|stl)(?:\.gz)?) *\| *([0-9,]+)`)
	rows := rowRe.FindAllStringSubmatch(string(readme), -1)
	if len(rows) == 0 {
		t.Fatal("no scene rows in README.md")
	}
	for _, m := range rows {
		name, want := m[1], m[2]
		t.Run(name, func(t *testing.T) {
			if testing.Short() && strings.HasPrefix(name, "conference") {
				t.Skip("large scene in -short")
			}
			n, _ := strconv.Atoi(strings.ReplaceAll(want, ",", ""))
			s, err := Load(filepath.Join(dir, name))
			require.NoError(t, err)
			require.NoError(t, s.Validate())
			assert.Equal(t, n, len(s.Tris))
			assert.True(t, !s.Bounds.Empty(), "bounds empty")
			if name == "conference.obj.gz" {
				// README: 53,627 zero-area triangles.
				assert.Equal(t, 53627, s.Stats.DegenerateTriangles)
			}
		})
	}
}
