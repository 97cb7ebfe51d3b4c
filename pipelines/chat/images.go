package chat

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"image"
	_ "image/gif" // the image part formats: PNG, JPEG, WebP, GIF (first frame)
	_ "image/jpeg"
	_ "image/png"
	"strings"

	"golang.org/x/image/draw"
	_ "golang.org/x/image/webp"

	"boxd/engine/llm"
	"boxd/engine/raster"
	"boxd/internal/problem"
)

// Image part limits (not in the contract; docs/decisions.md, "Images in
// chat completions").
const (
	// MaxImages is the most image parts one request may hold.
	MaxImages = 4
	// MaxImageBytes bounds one image file (after base64 decoding).
	MaxImageBytes = 8 << 20
	// MaxImagePixels bounds one image's width × height before it is
	// decoded (a small file can claim a huge canvas).
	MaxImagePixels = 25_000_000
	// MaxImageSide is the longest side an image is read at: larger ones
	// are scaled down first (Gemma 3's projector reads 896 × 896).
	MaxImageSide = 2048
)

// ImagePart is an image content part as sent: its URL (a data: URL).
type ImagePart struct {
	URL string
}

// readImage decodes an image part's data: URL into the picture the model
// reads and the SHA-256 of the file's bytes (the receipt's image_sha256).
func readImage(where, url string) (llm.Picture, string, *problem.Error) {
	switch {
	case url == "":
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: image_url.url is empty; send the image as a data: URL (data:image/png;base64,...)", where)
	case strings.HasPrefix(url, "http://"), strings.HasPrefix(url, "https://"):
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: this box does not fetch image URLs (nothing leaves the machine); send the image inline as a data: URL (data:image/png;base64,...)", where)
	case !strings.HasPrefix(url, "data:"):
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: image_url.url must be a data: URL (data:image/png;base64,...)", where)
	}
	meta, payload, ok := strings.Cut(url[len("data:"):], ",")
	if !ok || !strings.HasSuffix(meta, ";base64") {
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: the data: URL must be base64 (data:image/png;base64,...)", where)
	}
	switch mt := strings.ToLower(strings.TrimSuffix(meta, ";base64")); mt {
	case "image/png", "image/jpeg", "image/jpg", "image/webp", "image/gif":
	default:
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: image type %q; send PNG, JPEG, WebP or GIF", where, mt)
	}
	if base64.StdEncoding.DecodedLen(len(payload)) > MaxImageBytes+3 {
		return llm.Picture{}, "", problem.New(problem.TooLarge, "%s: the image is over %d MB; send a smaller one", where, MaxImageBytes>>20)
	}
	data, err := base64.StdEncoding.DecodeString(payload)
	if err != nil {
		if data, err = base64.RawStdEncoding.DecodeString(payload); err != nil {
			return llm.Picture{}, "", problem.New(problem.Invalid, "%s: the image's base64 does not decode", where)
		}
	}
	if len(data) > MaxImageBytes {
		return llm.Picture{}, "", problem.New(problem.TooLarge, "%s: the image is over %d MB; send a smaller one", where, MaxImageBytes>>20)
	}
	cfg, format, err := image.DecodeConfig(bytes.NewReader(data))
	if err != nil {
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: the image does not decode (%v); send PNG, JPEG, WebP or GIF", where, err)
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || cfg.Width*cfg.Height > MaxImagePixels {
		return llm.Picture{}, "", problem.New(problem.TooLarge, "%s: the image is %d × %d pixels; the most is %d million pixels", where, cfg.Width, cfg.Height, MaxImagePixels/1_000_000)
	}
	img, _, err := image.Decode(bytes.NewReader(data))
	if err != nil {
		return llm.Picture{}, "", problem.New(problem.Invalid, "%s: the %s image does not decode: %v", where, format, err)
	}
	if b := img.Bounds(); max(b.Dx(), b.Dy()) > MaxImageSide {
		w, h := b.Dx(), b.Dy()
		if w >= h {
			w, h = MaxImageSide, max(1, h*MaxImageSide/w)
		} else {
			w, h = max(1, w*MaxImageSide/h), MaxImageSide
		}
		dst := image.NewRGBA(image.Rect(0, 0, w, h))
		draw.ApproxBiLinear.Scale(dst, dst.Bounds(), img, b, draw.Src, nil)
		img = dst
	}
	r := raster.FromImage(img)
	sum := sha256.Sum256(data)
	return llm.Picture{Width: r.W, Height: r.H, RGB: r.Pix}, hex.EncodeToString(sum[:]), nil
}
