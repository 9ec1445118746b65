// provider-registry-install installs providers from a provider registry
// (providers.v1) the way Terraform's registry source does
// (hashicorp/terraform internal/getproviders registry_client.go and
// package_authentication.go, read with `search`), with the libraries it is
// built on:
//
//   - service discovery of the source's host with terraform-svchost's disco
//     (https://HOST/.well-known/terraform.json, "providers.v1");
//   - GET {providers.v1}NAMESPACE/TYPE/versions: 404 means the registry does
//     not know the provider; the version must be listed, with a protocol
//     version this client speaks (5.x or 6.x, as Terraform 1.x);
//   - GET {providers.v1}NAMESPACE/TYPE/VERSION/download/OS/ARCH: 404 means
//     no package for that platform; os/arch must be the ones asked for;
//     download_url, shasums_url and shasums_signature_url are resolved
//     against the final URL of that response (ResolveReference);
//   - the checks, in Terraform's order and words: the SHA256SUMS line for
//     `filename` equals `shasum`; the zip's sha256 equals `shasum`; SHA256SUMS
//     carries a binary detached OpenPGP signature by one of the listed keys
//     (golang.org/x/crypto/openpgp CheckDetachedSignature, the library
//     Terraform used for it before it moved to ProtonMail's fork of it);
//   - then it opens the zip and finds the provider executable.
//
// Usage: provider-registry-install OUT_DIR HOST/NAMESPACE/TYPE@VERSION:OS_ARCH...
// SSL_CERT_FILE names the test CA. One JSON line per package on stdout; on the
// first failure the error on stderr and exit code 1.
package main

import (
	"archive/zip"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/ioutil"
	"log"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/hashicorp/terraform-svchost/disco"
	"golang.org/x/crypto/openpgp"
	openpgperrors "golang.org/x/crypto/openpgp/errors"
)

type result struct {
	Provider       string   `json:"provider"`
	Version        string   `json:"version"`
	Platform       string   `json:"platform"`
	Protocols      []string `json:"protocols"`
	DownloadURL    string   `json:"downloadUrl"`
	ShasumsURL     string   `json:"shasumsUrl"`
	SignatureURL   string   `json:"signatureUrl"`
	Shasum         string   `json:"shasum"`
	KeyID          string   `json:"keyId"`
	File           string   `json:"file"`
	ContentType    string   `json:"contentType"`
	ContentEncoded string   `json:"contentEncoding"`
	Executable     string   `json:"executable"`
}

type signingKey struct {
	KeyID      string `json:"key_id"`
	ASCIIArmor string `json:"ascii_armor"`
}

type downloadDoc struct {
	Protocols   []string `json:"protocols"`
	OS          string   `json:"os"`
	Arch        string   `json:"arch"`
	Filename    string   `json:"filename"`
	DownloadURL string   `json:"download_url"`
	Shasum      string   `json:"shasum"`
	ShasumsURL  string   `json:"shasums_url"`
	SigURL      string   `json:"shasums_signature_url"`
	SigningKeys struct {
		GPGPublicKeys []signingKey `json:"gpg_public_keys"`
	} `json:"signing_keys"`
}

func fail(format string, args ...interface{}) {
	fmt.Fprintf(os.Stderr, format+"\n", args...)
	os.Exit(1)
}

var client = func() *http.Client {
	c := cleanhttp.DefaultPooledClient()
	c.Timeout = 10 * time.Second
	return c
}()

// get returns the status, the final URL and the body of a GET.
func get(u *url.URL) (int, *url.URL, []byte, http.Header, error) {
	resp, err := client.Get(u.String())
	if err != nil {
		return 0, u, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := ioutil.ReadAll(resp.Body)
	return resp.StatusCode, resp.Request.URL, body, resp.Header, err
}

// getFile is the registry client's getFile: anything but a 200 is an error.
func getFile(u *url.URL) ([]byte, error) {
	status, _, body, _, err := get(u)
	if err != nil {
		return nil, err
	}
	if status != http.StatusOK {
		return nil, fmt.Errorf("%d %s", status, http.StatusText(status))
	}
	return body, nil
}

// checkSignature is the signature step of package_authentication.go: the
// first listed key whose keyring verifies the detached signature.
func checkSignature(document, signature []byte, keys []signingKey) (string, error) {
	for _, key := range keys {
		keyring, err := openpgp.ReadArmoredKeyRing(strings.NewReader(key.ASCIIArmor))
		if err != nil {
			return "", fmt.Errorf("error decoding signing key: %s", err)
		}
		entity, err := openpgp.CheckDetachedSignature(keyring, bytes.NewReader(document), bytes.NewReader(signature))
		if err == openpgperrors.ErrUnknownIssuer {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("error checking signature: %s", err)
		}
		keyID := entity.PrimaryKey.KeyIdString()
		if key.KeyID != "" && !strings.EqualFold(key.KeyID, keyID) {
			return "", fmt.Errorf("the registry lists key_id %s for a key whose id is %s", key.KeyID, keyID)
		}
		return keyID, nil
	}
	return "", fmt.Errorf("authentication signature from unknown issuer")
}

func main() {
	log.SetOutput(ioutil.Discard) // disco logs each discovery; Terraform shows that only with TF_LOG
	if len(os.Args) < 3 {
		fail("usage: provider-registry-install OUT_DIR HOST/NAMESPACE/TYPE@VERSION:OS_ARCH...")
	}
	outDir := os.Args[1]
	services := disco.New()
	services.Transport = client.Transport
	for _, spec := range os.Args[2:] {
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
		osName, arch := platform[:strings.Index(platform, "_")], platform[strings.Index(platform, "_")+1:]
		host, err := svchost.ForComparison(parts[0])
		if err != nil {
			fail("invalid provider host %q: %s", parts[0], err)
		}
		base, err := services.DiscoverServiceURL(host, "providers.v1")
		if err != nil {
			fail("discovery for %s: %s", host.ForDisplay(), err)
		}
		if !strings.HasSuffix(base.Path, "/") {
			base.Path += "/"
		}

		versionsURL := base.ResolveReference(&url.URL{Path: path.Join(parts[1], parts[2], "versions")})
		status, _, body, _, err := get(versionsURL)
		if err != nil {
			fail("%s: %s", versionsURL, err)
		}
		if status == http.StatusNotFound {
			fail("provider registry %s does not have a provider named %s", host.ForDisplay(), provider)
		}
		if status != http.StatusOK {
			fail("%s: %d", versionsURL, status)
		}
		var versions struct {
			Versions []struct {
				Version   string   `json:"version"`
				Protocols []string `json:"protocols"`
			} `json:"versions"`
			Warnings []string `json:"warnings"`
		}
		if err := json.Unmarshal(body, &versions); err != nil {
			fail("%s: %s", versionsURL, err)
		}
		var protocols []string
		listed := false
		for _, v := range versions.Versions {
			if v.Version == version {
				listed, protocols = true, v.Protocols
			}
		}
		if !listed {
			fail("%s: version %s not listed", versionsURL, version)
		}
		speaks := false
		for _, p := range protocols {
			if strings.HasPrefix(p, "5.") || strings.HasPrefix(p, "6.") || p == "5" || p == "6" {
				speaks = true
			}
		}
		if !speaks {
			fail("%s %s speaks protocols %v, none of them 5 or 6", provider, version, protocols)
		}

		downloadURL := base.ResolveReference(&url.URL{Path: path.Join(parts[1], parts[2], version, "download", osName, arch)})
		status, finalURL, body, _, err := get(downloadURL)
		if err != nil {
			fail("%s: %s", downloadURL, err)
		}
		if status == http.StatusNotFound {
			fail("provider %s %s is not available for %s", provider, version, platform)
		}
		if status != http.StatusOK {
			fail("%s: %d", downloadURL, status)
		}
		var doc downloadDoc
		if err := json.Unmarshal(body, &doc); err != nil {
			fail("%s: %s", downloadURL, err)
		}
		if doc.OS != osName || doc.Arch != arch {
			fail("registry response to request for %s archive has incorrect target %s_%s", platform, doc.OS, doc.Arch)
		}
		resolve := func(what, raw string) *url.URL {
			u, err := url.Parse(raw)
			if err != nil {
				fail("registry response includes invalid %s: %s", what, err)
			}
			u = finalURL.ResolveReference(u)
			if u.Scheme != "http" && u.Scheme != "https" {
				fail("registry response includes invalid %s: must use http or https scheme", what)
			}
			return u
		}
		zipURL := resolve("download URL", doc.DownloadURL)
		sumsURL := resolve("SHASUMS URL", doc.ShasumsURL)
		sigURL := resolve("SHASUMS signature URL", doc.SigURL)
		if len(doc.Shasum) != sha256.Size*2 {
			fail("registry response includes invalid SHA256 hash %q", doc.Shasum)
		}
		document, err := getFile(sumsURL)
		if err != nil {
			fail("failed to retrieve authentication checksums for provider: %s", err)
		}
		signature, err := getFile(sigURL)
		if err != nil {
			fail("failed to retrieve cryptographic signature for provider: %s", err)
		}

		// The package, fetched as the installer does, into a file.
		resp, err := client.Get(zipURL.String())
		if err != nil {
			fail("%s: %s", zipURL, err)
		}
		if resp.StatusCode != http.StatusOK {
			fail("%s: %s", zipURL, resp.Status)
		}
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			fail("%s", err)
		}
		file := filepath.Join(outDir, doc.Filename)
		out, err := os.Create(file)
		if err != nil {
			fail("%s", err)
		}
		hash := sha256.New()
		if _, err := io.Copy(io.MultiWriter(out, hash), resp.Body); err != nil {
			fail("%s: %s", zipURL, err)
		}
		resp.Body.Close()
		out.Close()

		// 1. The checksum list's line for the file.
		var listedSum string
		for _, line := range strings.Split(string(document), "\n") {
			fields := strings.Fields(line)
			if len(fields) > 1 && fields[1] == doc.Filename {
				listedSum = fields[0]
				break
			}
		}
		if listedSum == "" {
			fail("checksum list has no SHA-256 hash for %q", doc.Filename)
		}
		if !strings.EqualFold(listedSum, doc.Shasum) {
			fail("checksum list has unexpected SHA-256 hash %s (expected %s)", listedSum, doc.Shasum)
		}
		// 2. The archive's own sha256.
		got := hex.EncodeToString(hash.Sum(nil))
		if got != strings.ToLower(doc.Shasum) {
			fail("archive has incorrect SHA-256 checksum %s (expected %s)", got, doc.Shasum)
		}
		// 3. The signature by a listed key.
		keyID, err := checkSignature(document, signature, doc.SigningKeys.GPGPublicKeys)
		if err != nil {
			fail("%s", err)
		}

		zr, err := zip.OpenReader(file)
		if err != nil {
			fail("%s: not a zip: %s", file, err)
		}
		executable := ""
		for _, f := range zr.File {
			if strings.HasPrefix(f.Name, "terraform-provider-"+parts[2]) {
				executable = f.Name
			}
		}
		zr.Close()
		if executable == "" {
			fail("%s: no terraform-provider-%s executable in the package", file, parts[2])
		}
		line, _ := json.Marshal(result{
			Provider: provider, Version: version, Platform: platform, Protocols: doc.Protocols,
			DownloadURL: zipURL.String(), ShasumsURL: sumsURL.String(), SignatureURL: sigURL.String(),
			Shasum: doc.Shasum, KeyID: keyID, File: file,
			ContentType: resp.Header.Get("Content-Type"), ContentEncoded: resp.Header.Get("Content-Encoding"), Executable: executable,
		})
		fmt.Println(string(line))
	}
}
