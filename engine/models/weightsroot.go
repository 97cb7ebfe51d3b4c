// Package models holds what boxd knows about model files independent of the
// runtime that executes them: the weights root that receipts carry, and the
// chat-template families a box can run.
package models

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"

	"boxd/engine/attest"
)

// ManifestFile is one file of a model's manifest.
type ManifestFile struct {
	// Name is the file's place in the model, "00001-of-00001" (a split
	// GGUF's parts: "00002-of-00003"), never its local file name: a root
	// identifies the weights, whatever the file is called on a box.
	Name   string `json:"name"`
	Size   int64  `json:"-"`
	SHA256 string `json:"sha256"`
	// SizeText is Size as a decimal string: signed and hashed documents carry
	// numbers as strings.
	SizeText string `json:"size"`
}

// WeightsRoot is a model's manifest and its root hash.
type WeightsRoot struct {
	// Root is the hex SHA-256 of the canonical JSON of {"files": Files}.
	Root  string         `json:"weights_root"`
	Files []ManifestFile `json:"files"`
}

// splitName matches llama.cpp's split GGUF names: name-00001-of-00003.gguf.
var splitName = regexp.MustCompile(`^(.*)-(\d{5})-of-(\d{5})\.gguf$`)

// WeightsRootOf hashes the files of the model at path: the file itself, or
// every part of a split GGUF when path names one part.
func WeightsRootOf(path string) (WeightsRoot, error) {
	paths, err := FilesOf(path)
	if err != nil {
		return WeightsRoot{}, err
	}
	files := make([]ManifestFile, 0, len(paths))
	for _, p := range paths {
		f, err := hashFile(context.Background(), p)
		if err != nil {
			return WeightsRoot{}, err
		}
		files = append(files, f)
	}
	return RootOf(files)
}

// FilesOf lists the files of the model at path: path itself, or every part
// of a split GGUF (name-00001-of-00003.gguf) when path names one part.
func FilesOf(path string) ([]string, error) {
	m := splitName.FindStringSubmatch(filepath.Base(path))
	if m == nil {
		return []string{path}, nil
	}
	n, err := strconv.Atoi(m[3])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("split model %s: bad part count", path)
	}
	paths := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		paths = append(paths, filepath.Join(filepath.Dir(path), fmt.Sprintf("%s-%05d-of-%05d.gguf", m[1], i, n)))
	}
	return paths, nil
}

// RootOf computes the root over a model's files in part order (as FilesOf
// lists them): each is named by its place, PartName(i, n), whatever its
// name was.
func RootOf(files []ManifestFile) (WeightsRoot, error) {
	files = append([]ManifestFile(nil), files...)
	for i := range files {
		files[i].Name = PartName(i+1, len(files))
		files[i].SizeText = strconv.FormatInt(files[i].Size, 10)
	}
	doc, err := attest.Canonical(map[string]any{"files": files})
	if err != nil {
		return WeightsRoot{}, fmt.Errorf("weights root: %w", err)
	}
	sum := sha256.Sum256(doc)
	return WeightsRoot{Root: hex.EncodeToString(sum[:]), Files: files}, nil
}

// PartName is the manifest name of part i of n: "00001-of-00001" for a
// single file, as llama.cpp numbers split GGUF parts.
func PartName(i, n int) string { return fmt.Sprintf("%05d-of-%05d", i, n) }

// ctxReader stops a long read (a model file is tens of GB) when ctx ends.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func hashFile(ctx context.Context, path string) (ManifestFile, error) {
	f, err := os.Open(path)
	if err != nil {
		return ManifestFile{}, fmt.Errorf("weights root: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, ctxReader{ctx, f})
	if err != nil {
		return ManifestFile{}, fmt.Errorf("weights root: read %s: %w", path, err)
	}
	return ManifestFile{Name: filepath.Base(path), Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}
