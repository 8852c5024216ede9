package scenes

import (
	"encoding/base64"
	"encoding/binary"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/qmuntal/gltf"
)

// GLB container constants (glTF 2.0 specification, section 4.4).
const (
	glbMagic     = 0x46546C67 // "glTF"
	glbChunkJSON = 0x4E4F534A // "JSON"
	glbChunkBIN  = 0x004E4942 // "BIN\0"
	glbHeader    = 12
)

// isGLB reports whether data starts like a GLB file.
func isGLB(data []byte) bool {
	return len(data) >= 4 && binary.LittleEndian.Uint32(data) == glbMagic
}

// splitGLB returns the JSON chunk and the BIN chunk (nil when absent) of a
// GLB file, checking the header, version and chunk lengths against data.
func splitGLB(data []byte) (js, bin []byte, err error) {
	if len(data) < glbHeader+8 {
		return nil, nil, fmt.Errorf("GLB: %d bytes, too short for the header and a chunk", len(data))
	}
	if v := binary.LittleEndian.Uint32(data[4:]); v != 2 {
		return nil, nil, fmt.Errorf("GLB: container version %d (want 2)", v)
	}
	total := int64(binary.LittleEndian.Uint32(data[8:]))
	if total < glbHeader {
		return nil, nil, fmt.Errorf("GLB: header length %d is shorter than the header", total)
	}
	if total > int64(len(data)) {
		return nil, nil, fmt.Errorf("GLB: header length %d but the file has %d bytes (truncated)", total, len(data))
	}
	rest := data[glbHeader:total]
	for i := 0; len(rest) > 0; i++ {
		if len(rest) < 8 {
			return nil, nil, fmt.Errorf("GLB: chunk %d: %d bytes left, too short for a chunk header", i, len(rest))
		}
		n := int64(binary.LittleEndian.Uint32(rest))
		typ := binary.LittleEndian.Uint32(rest[4:])
		if n > int64(len(rest)-8) {
			return nil, nil, fmt.Errorf("GLB: chunk %d: length %d but %d bytes left", i, n, len(rest)-8)
		}
		body := rest[8 : 8+n]
		rest = rest[8+n:]
		switch {
		case i == 0 && typ != glbChunkJSON:
			return nil, nil, fmt.Errorf("GLB: first chunk has type %#x, want JSON", typ)
		case i == 0:
			js = body
		case i == 1 && typ == glbChunkBIN:
			bin = body
		}
		// Further chunks (and a second chunk of another type) are ignored,
		// as the specification asks.
	}
	return js, bin, nil
}

// supportedRequired lists the required extensions the loader honours or
// that cannot change geometry (materials and textures).
func supportedRequired(ext string) bool {
	switch ext {
	case "KHR_mesh_quantization", "KHR_texture_transform", "KHR_texture_basisu",
		"EXT_texture_webp", "EXT_texture_avif", "KHR_materials_variants":
		return true
	}
	return strings.HasPrefix(ext, "KHR_materials_")
}

// checkRequired fails, naming them, when the file requires extensions the
// loader cannot read (Draco or meshopt compression, among others). It runs
// before any buffer is read.
func checkRequired(doc *gltf.Document) error {
	var bad []string
	for _, e := range doc.ExtensionsRequired {
		if !supportedRequired(e) {
			bad = append(bad, e)
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("unsupported required extension %s (the loader reads uncompressed geometry, KHR_mesh_quantization and material extensions only)", strings.Join(bad, ", "))
	}
	return nil
}

// buffers resolves glTF buffers on demand: the GLB BIN chunk, base64 data
// URIs and files relative to dir. Each is checked to hold byteLength bytes
// and cut to that length.
type buffers struct {
	doc  *gltf.Document
	bin  []byte // GLB BIN chunk, nil for .gltf
	glb  bool
	dir  string
	data [][]byte
}

func (b *buffers) get(i int) ([]byte, error) {
	if i < 0 || i >= len(b.doc.Buffers) {
		return nil, fmt.Errorf("buffer %d does not exist (%d buffers)", i, len(b.doc.Buffers))
	}
	if b.data == nil {
		b.data = make([][]byte, len(b.doc.Buffers))
	}
	if b.data[i] != nil {
		return b.data[i], nil
	}
	buf := b.doc.Buffers[i]
	if buf.ByteLength < 1 {
		return nil, fmt.Errorf("buffer %d: byteLength %d (want >= 1)", i, buf.ByteLength)
	}
	var d []byte
	var err error
	switch uri := buf.URI; {
	case uri == "" && b.glb && i == 0:
		if b.bin == nil {
			return nil, fmt.Errorf("buffer 0: no uri and the GLB file has no BIN chunk")
		}
		d = b.bin
	case uri == "":
		return nil, fmt.Errorf("buffer %d: no uri (only buffer 0 of a GLB file may use the BIN chunk)", i)
	case strings.HasPrefix(uri, "data:"):
		d, err = decodeDataURI(uri)
	default:
		d, err = b.readFile(uri)
	}
	if err != nil {
		return nil, fmt.Errorf("buffer %d: %v", i, err)
	}
	if len(d) < buf.ByteLength {
		return nil, fmt.Errorf("buffer %d: %d bytes, byteLength %d", i, len(d), buf.ByteLength)
	}
	b.data[i] = d[:buf.ByteLength:buf.ByteLength]
	return b.data[i], nil
}

// decodeDataURI decodes a base64 data: URI of any media type.
func decodeDataURI(uri string) ([]byte, error) {
	head, payload, ok := strings.Cut(uri, ",")
	if !ok || !strings.HasSuffix(head, ";base64") {
		return nil, fmt.Errorf("data URI %q is not base64", clipS(uri))
	}
	d, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		return nil, fmt.Errorf("data URI: %v", err)
	}
	return d, nil
}

// readFile reads a buffer file named by a relative URI inside dir.
func (b *buffers) readFile(uri string) ([]byte, error) {
	u, err := url.Parse(uri)
	if err != nil {
		return nil, fmt.Errorf("uri %q: %v", clipS(uri), err)
	}
	if u.Scheme != "" {
		return nil, fmt.Errorf("uri %q: only relative file names and data URIs are read", clipS(uri))
	}
	rel := filepath.FromSlash(u.Path)
	if !filepath.IsLocal(rel) {
		return nil, fmt.Errorf("uri %q leaves the file's folder", clipS(uri))
	}
	if b.dir == "" {
		return nil, fmt.Errorf("uri %q: external buffers need the file's folder (load the file by path, or set LoadOptions.Dir)", clipS(uri))
	}
	return os.ReadFile(filepath.Join(b.dir, rel))
}
