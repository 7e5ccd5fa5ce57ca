package s3

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/minio/minio-go/v7"

	"github.com/stratadb/strata/internal/base"
	"github.com/stratadb/strata/table/fileio"
)

// FS is a fileio.FS over one bucket, under an optional key prefix.
type FS struct {
	client *minio.Client
	bucket string
	prefix string // "" or ends with "/"
}

// New returns the FS of bucket under prefix (may be empty) through client.
func New(client *minio.Client, bucket, prefix string) *FS {
	prefix = strings.Trim(prefix, "/")
	if prefix != "" {
		prefix += "/"
	}
	return &FS{client: client, bucket: bucket, prefix: prefix}
}

// Identity implements fileio.Identifier.
func (f *FS) Identity() string { return "s3://" + f.bucket + "/" + f.prefix }

func (f *FS) key(p string) string { return f.prefix + strings.TrimPrefix(p, "/") }

func (f *FS) wrap(op, p string, err error) error {
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound {
		return fmt.Errorf("s3://%s/%s: %w", f.bucket, f.key(p), base.ErrNotFound)
	}
	return fmt.Errorf("s3 %s s3://%s/%s: %w", op, f.bucket, f.key(p), err)
}

// ReadFile implements fileio.FS.
func (f *FS) ReadFile(p string) ([]byte, error) {
	obj, err := f.client.GetObject(context.Background(), f.bucket, f.key(p), minio.GetObjectOptions{})
	if err != nil {
		return nil, f.wrap("get", p, err)
	}
	defer obj.Close()
	b, err := io.ReadAll(obj)
	if err != nil {
		return nil, f.wrap("get", p, err)
	}
	return b, nil
}

func (f *FS) put(p string, data []byte, opts minio.PutObjectOptions) error {
	_, err := f.client.PutObject(context.Background(), f.bucket, f.key(p), bytes.NewReader(data), int64(len(data)), opts)
	return err
}

// WriteFile implements fileio.FS.
func (f *FS) WriteFile(p string, data []byte) error {
	if err := f.put(p, data, minio.PutObjectOptions{}); err != nil {
		return f.wrap("put", p, err)
	}
	return nil
}

// PutIfAbsent implements fileio.FS with a conditional PUT.
func (f *FS) PutIfAbsent(p string, data []byte) error {
	opts := minio.PutObjectOptions{}
	opts.SetMatchETagExcept("*")
	if err := f.put(p, data, opts); err != nil {
		resp := minio.ToErrorResponse(err)
		if resp.StatusCode == http.StatusPreconditionFailed || resp.Code == "PreconditionFailed" {
			return fmt.Errorf("s3://%s/%s: %w", f.bucket, f.key(p), fileio.ErrExist)
		}
		return f.wrap("put", p, err)
	}
	return nil
}

// Delete implements fileio.FS.
func (f *FS) Delete(p string) error {
	if err := f.client.RemoveObject(context.Background(), f.bucket, f.key(p), minio.RemoveObjectOptions{}); err != nil {
		if resp := minio.ToErrorResponse(err); resp.Code == "NoSuchKey" {
			return nil
		}
		return f.wrap("delete", p, err)
	}
	return nil
}

func (f *FS) list(dir string) ([]minio.ObjectInfo, error) {
	prefix := f.key(strings.TrimSuffix(dir, "/")) + "/"
	if strings.Trim(dir, "/") == "" {
		prefix = f.prefix
	}
	var out []minio.ObjectInfo
	for obj := range f.client.ListObjects(context.Background(), f.bucket, minio.ListObjectsOptions{Prefix: prefix}) {
		if obj.Err != nil {
			return nil, f.wrap("list", dir, obj.Err)
		}
		obj.Key = strings.TrimPrefix(obj.Key, prefix)
		out = append(out, obj)
	}
	return out, nil
}

// List implements fileio.FS.
func (f *FS) List(dir string) ([]fileio.FileInfo, error) {
	objs, err := f.list(dir)
	if err != nil {
		return nil, err
	}
	var out []fileio.FileInfo
	for _, o := range objs {
		if o.Key == "" || strings.HasSuffix(o.Key, "/") {
			continue
		}
		out = append(out, fileio.FileInfo{Name: o.Key, Size: o.Size, ModUnixMilli: o.LastModified.UnixMilli()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// ListDirs implements fileio.FS.
func (f *FS) ListDirs(dir string) ([]string, error) {
	objs, err := f.list(dir)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, o := range objs {
		if d, ok := strings.CutSuffix(o.Key, "/"); ok && d != "" {
			out = append(out, d)
		}
	}
	sort.Strings(out)
	return out, nil
}

// Exists implements fileio.FS.
func (f *FS) Exists(p string) (bool, error) {
	_, err := f.client.StatObject(context.Background(), f.bucket, f.key(p), minio.StatObjectOptions{})
	if err == nil {
		return true, nil
	}
	resp := minio.ToErrorResponse(err)
	if resp.Code == "NoSuchKey" || resp.StatusCode == http.StatusNotFound {
		return false, nil
	}
	return false, f.wrap("stat", p, err)
}
