package main

// The go-getter half of module-install (set up as Terraform's
// internal/getmodules/getter.go sets it up) and the listing of what it unpacked.

import (
	"os"
	"path/filepath"
	"sort"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter"
)

// fetchPackage is Terraform's go-getter call: its getters and decompressors
// (chosen by the URL's extension or ?archive=), no detectors since the
// address is already a URL, and a plain HTTP client with no credentials.
func fetchPackage(packageAddr, dest string) error {
	httpGetter := &getter.HttpGetter{Client: cleanhttp.DefaultClient(), Netrc: true}
	client := getter.Client{
		Src:       packageAddr,
		Dst:       dest,
		Pwd:       dest,
		Mode:      getter.ClientModeDir,
		Detectors: []getter.Detector{},
		Decompressors: map[string]getter.Decompressor{
			"bz2": new(getter.Bzip2Decompressor), "gz": new(getter.GzipDecompressor),
			"xz": new(getter.XzDecompressor), "zip": new(getter.ZipDecompressor),
			"tar.bz2": new(getter.TarBzip2Decompressor), "tar.tbz2": new(getter.TarBzip2Decompressor),
			"tar.gz": new(getter.TarGzipDecompressor), "tgz": new(getter.TarGzipDecompressor),
			"tar.xz": new(getter.TarXzDecompressor), "txz": new(getter.TarXzDecompressor),
		},
		Getters: map[string]getter.Getter{
			"file": new(getter.FileGetter), "git": new(getter.GitGetter), "hg": new(getter.HgGetter),
			"gcs": new(getter.GCSGetter), "s3": new(getter.S3Getter),
			"http": httpGetter, "https": httpGetter,
		},
	}
	return client.Get()
}

// listFiles gives every file under dir, relative, with forward slashes, sorted.
func listFiles(dir string) ([]string, error) {
	files := []string{}
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files = append(files, filepath.ToSlash(rel))
		return err
	})
	sort.Strings(files)
	return files, err
}
