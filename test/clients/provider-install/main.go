// provider-install installs providers from a provider network mirror the way
// Terraform's network mirror source does (hashicorp/terraform
// internal/getproviders/http_mirror_source.go, checked with `search`):
//
//   - GET {base}HOSTNAME/NAMESPACE/TYPE/index.json: 200 with a Content-Type
//     whose media type is application/json, {"versions": {...}}; a 404 means
//     the mirror does not have the provider;
//   - GET {base}HOSTNAME/NAMESPACE/TYPE/VERSION.json: the same checks, then
//     archives[OS_ARCH] (missing: platform not supported); its url is parsed
//     and resolved against the final URL of VERSION.json (ResolveReference);
//   - GET that URL with Go's default client (which asks for gzip and would
//     undo a Content-Encoding, as Terraform's client does), into a file;
//   - the package's hashes as getproviders.PackageMatchesAnyHash checks them:
//     h1: with golang.org/x/mod's dirhash.HashZip(Hash1), zh: the sha256 of
//     the zip file. This client requires every listed hash to match (Terraform
//     needs one); then it opens the zip and finds the provider executable.
//
// Usage: provider-install BASE_URL OUT_DIR HOSTNAME/NAMESPACE/TYPE@VERSION:OS_ARCH...
// The base URL must be https (Terraform refuses anything else for a network
// mirror); SSL_CERT_FILE names the test CA. One JSON line per package on
// stdout; on the first failure the error on stderr and exit code 1.
package main

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"golang.org/x/mod/sumdb/dirhash"
)

type result struct {
	Provider        string   `json:"provider"`
	Version         string   `json:"version"`
	Platform        string   `json:"platform"`
	URL             string   `json:"url"`
	File            string   `json:"file"`
	Hashes          []string `json:"hashes"`
	H1              string   `json:"h1"`
	ZH              string   `json:"zh"`
	ContentType     string   `json:"contentType"`
	ContentEncoding string   `json:"contentEncoding"`
	Executable      string   `json:"executable"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

// getJSON is the mirror source's get: only a 200 with application/json gives a body.
func getJSON(u *url.URL, into interface{}) (int, *url.URL, error) {
	resp, err := http.Get(u.String())
	if err != nil {
		return 0, u, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return resp.StatusCode, resp.Request.URL, nil
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return 0, resp.Request.URL, fmt.Errorf("%s: response has invalid Content-Type: %s", u, err)
	}
	if mt != "application/json" {
		return 0, resp.Request.URL, fmt.Errorf("%s: response has invalid Content-Type %q: must be application/json", u, mt)
	}
	if err := json.NewDecoder(resp.Body).Decode(into); err != nil {
		return 0, resp.Request.URL, fmt.Errorf("%s: invalid response content from mirror server: %s", u, err)
	}
	return resp.StatusCode, resp.Request.URL, nil
}

func main() {
	if len(os.Args) < 4 {
		fail("usage: provider-install BASE_URL OUT_DIR HOSTNAME/NAMESPACE/TYPE@VERSION:OS_ARCH...")
	}
	base, err := url.Parse(os.Args[1])
	if err != nil || base.Scheme != "https" {
		fail("the network mirror URL must be https, got %q", os.Args[1])
	}
	outDir := os.Args[2]
	for _, spec := range os.Args[3:] {
		at := strings.LastIndex(spec, "@")
		colon := strings.LastIndex(spec, ":")
		if at < 0 || colon < at {
			fail("bad package %q", spec)
		}
		provider, version, platform := spec[:at], spec[at+1:colon], spec[colon+1:]
		parts := strings.Split(provider, "/")
		if len(parts) != 3 {
			fail("bad provider address %q", provider)
		}

		var index struct {
			Versions map[string]struct{} `json:"versions"`
		}
		indexURL := base.ResolveReference(&url.URL{Path: path.Join(parts[0], parts[1], parts[2], "index.json")})
		status, _, err := getJSON(indexURL, &index)
		if err != nil {
			fail("%s", err)
		}
		if status == http.StatusNotFound {
			fail("%s: provider %s not found in the mirror (404)", indexURL, provider)
		}
		if status != http.StatusOK {
			fail("%s: server returned unsuccessful status %d", indexURL, status)
		}
		if _, ok := index.Versions[version]; !ok {
			fail("%s: version %s not listed", indexURL, version)
		}

		var meta struct {
			Archives map[string]*struct {
				RelativeURL string `json:"url"`
				Hashes      []string
			} `json:"archives"`
		}
		versionURL := base.ResolveReference(&url.URL{Path: path.Join(parts[0], parts[1], parts[2], version+".json")})
		status, finalURL, err := getJSON(versionURL, &meta)
		if err != nil {
			fail("%s", err)
		}
		if status != http.StatusOK {
			fail("%s: provider mirror does not have archive index for previously-reported %s version %s (status %d)", versionURL, provider, version, status)
		}
		archive, ok := meta.Archives[platform]
		if !ok {
			fail("%s: provider %s %s is not available for %s", versionURL, provider, version, platform)
		}
		rel, err := url.Parse(archive.RelativeURL)
		if err != nil {
			fail("provider mirror returned invalid URL %q: %s", archive.RelativeURL, err)
		}
		zipURL := finalURL.ResolveReference(rel)

		resp, err := http.Get(zipURL.String())
		if err != nil {
			fail("%s: %s", zipURL, err)
		}
		if resp.StatusCode != http.StatusOK {
			fail("%s: status %d", zipURL, resp.StatusCode)
		}
		file := filepath.Join(outDir, path.Base(zipURL.Path))
		out, err := os.Create(file)
		if err != nil {
			fail("%s", err)
		}
		if _, err := io.Copy(out, resp.Body); err != nil {
			fail("%s: %s", zipURL, err)
		}
		resp.Body.Close()
		out.Close()

		h1, err := dirhash.HashZip(file, dirhash.Hash1)
		if err != nil {
			fail("%s: not a provider package: %s", zipURL, err)
		}
		data, err := os.ReadFile(file)
		if err != nil {
			fail("%s", err)
		}
		sum := sha256.Sum256(data)
		zh := "zh:" + hex.EncodeToString(sum[:])
		if len(archive.Hashes) == 0 {
			fail("%s: lists no hashes for %s", versionURL, platform)
		}
		for _, want := range archive.Hashes {
			switch {
			case strings.HasPrefix(want, "h1:") && want != h1:
				fail("%s: the package %s doesn't match the checksum %s (its h1: is %s)", versionURL, zipURL, want, h1)
			case strings.HasPrefix(want, "zh:") && want != zh:
				fail("%s: the package %s doesn't match the checksum %s (its zh: is %s)", versionURL, zipURL, want, zh)
			}
		}

		// terraform init unpacks the package and runs terraform-provider-TYPE*.
		reader, err := zip.OpenReader(file)
		if err != nil {
			fail("%s: %s", file, err)
		}
		executable := ""
		for _, f := range reader.File {
			if strings.HasPrefix(f.Name, "terraform-provider-"+parts[2]) {
				executable = f.Name
			}
		}
		reader.Close()
		if executable == "" {
			fail("%s: holds no terraform-provider-%s executable", file, parts[2])
		}

		line, _ := json.Marshal(result{
			Provider: provider, Version: version, Platform: platform, URL: zipURL.String(), File: file,
			Hashes: archive.Hashes, H1: h1, ZH: zh,
			ContentType: resp.Header.Get("Content-Type"), ContentEncoding: resp.Header.Get("Content-Encoding"),
			Executable: executable,
		})
		fmt.Println(string(line))
	}
}
