// Package s3 is the fileio.FS of an S3-compatible object store, through
// github.com/minio/minio-go/v7.
//
// # Semantics
//
//   - WriteFile is a single PUT: S3 makes an object visible whole or not at
//     all, so [no-torn-write] holds without a temporary name.
//   - PutIfAbsent is a PUT with "If-None-Match: *" (S3 conditional writes,
//     supported by AWS S3, MinIO and gofakes3); a 412 Precondition Failed
//     means the name is taken and maps to fileio.ErrExist. A store without
//     conditional writes would silently overwrite: do not use one.
//   - Directories are key prefixes ending in "/": List returns the objects
//     directly under dir, ListDirs the common prefixes.
//
// Errors name the bucket and key; a missing object wraps base.ErrNotFound.
package s3
