// module-install installs one registry module the way `terraform init` does,
// with the libraries Terraform uses for it: terraform-svchost's disco
// (discovery, credentials), go-version (constraints) and go-getter (download,
// unpacking). The suite runs it against modmirror, so an answer Terraform
// would reject fails a test.
//
// The steps follow hashicorp/terraform's internal/initwd (installRegistryModule),
// internal/registry (ModuleVersions, ModuleLocation) and internal/getmodules;
// the code is ours. Left out: retries, the module manifest, reading .tf
// files, and CLI config files (-service-override stands in for a `host`
// block, -token for a `credentials` block).
//
//	module-install -source HOST/NS/NAME/PROVIDER[//SUBDIR] -version CONSTRAINT -dest DIR
//	  [-token TOKEN] [-service-override modules.v1=http://127.0.0.1:PORT/v1/modules/]
//
// HTTPS trusts the system roots, or SSL_CERT_FILE. Prints a JSON summary of
// what it installed; on failure, the error on stderr and exit code 1.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	cleanhttp "github.com/hashicorp/go-cleanhttp"
	getter "github.com/hashicorp/go-getter"
	version "github.com/hashicorp/go-version"
	svchost "github.com/hashicorp/terraform-svchost"
	"github.com/hashicorp/terraform-svchost/auth"
	"github.com/hashicorp/terraform-svchost/disco"
)

// Terraform sends its own version on registry requests; a server may log it.
const terraformVersion = "1.9.8"
const userAgent = "Terraform/" + terraformVersion + " (modmirror module-install)"

type summary struct {
	Source      string   `json:"source"`
	Version     string   `json:"version"`
	VersionsURL string   `json:"versionsUrl"`
	DownloadURL string   `json:"downloadUrl"`
	Status      int      `json:"downloadStatus"`
	Location    string   `json:"location"` // X-Terraform-Get as sent
	Package     string   `json:"package"`  // what go-getter fetched
	Dir         string   `json:"dir"`      // the module's folder
	Files       []string `json:"files"`
}

// overrides holds -service-override values: the services map of a CLI config `host` block.
type overrides map[string]interface{}

func (o overrides) String() string { return fmt.Sprint(map[string]interface{}(o)) }
func (o overrides) Set(s string) error {
	id, u, ok := strings.Cut(s, "=")
	if !ok {
		return errors.New("want SERVICE=URL, e.g. modules.v1=http://127.0.0.1:8080/v1/modules/")
	}
	o[id] = u
	return nil
}

func main() {
	source := flag.String("source", "", "registry address HOST/NS/NAME/PROVIDER[//SUBDIR]")
	constraint := flag.String("version", "", "version constraint, as in a module block")
	dest := flag.String("dest", "", "folder to install into (replaced, as .terraform/modules/KEY is)")
	token := flag.String("token", "", "bearer token for the registry host (a CLI credentials block)")
	forced := overrides{}
	flag.Var(forced, "service-override", "SERVICE=URL instead of discovery (a CLI host block)")
	flag.Parse()
	// disco logs each discovery with the standard logger; Terraform shows
	// such lines only when TF_LOG is set.
	if os.Getenv("TF_LOG") == "" {
		log.SetOutput(io.Discard)
	}
	if *source == "" || *dest == "" {
		flag.Usage()
		os.Exit(2)
	}
	out, err := install(*source, *constraint, *dest, *token, forced)
	if err != nil {
		fmt.Fprintln(os.Stderr, "module-install:", err)
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	_ = enc.Encode(out)
}

func install(source, constraint, dest, token string, forced overrides) (*summary, error) {
	// A registry source may carry //SUBDIR, split off the way go-getter does.
	pkg, regSubdir := getter.SourceDirSubdir(source)
	parts := strings.Split(pkg, "/")
	if len(parts) != 4 {
		return nil, fmt.Errorf("source %q: want HOST/NAMESPACE/NAME/PROVIDER", source)
	}
	host, err := svchost.ForComparison(parts[0])
	if err != nil {
		return nil, fmt.Errorf("source %q: invalid host: %w", source, err)
	}
	module := strings.Join(parts[1:], "/")

	// Registry requests: Terraform's client (cleanhttp, 10 s), whose
	// transport disco shares, and the token of a credentials block.
	client := cleanhttp.DefaultPooledClient()
	client.Timeout = 10 * time.Second
	creds := auth.StaticCredentialsSource(nil)
	if token != "" {
		creds = auth.StaticCredentialsSource(map[svchost.Hostname]map[string]interface{}{host: {"token": token}})
	}
	services := disco.NewWithCredentialsSource(creds)
	services.Transport = client.Transport
	services.SetUserAgent(userAgent)
	if len(forced) > 0 {
		services.ForceHostServices(host, forced)
	}

	base, err := services.DiscoverServiceURL(host, "modules.v1")
	if err != nil {
		return nil, fmt.Errorf("discovery for %s: %w", host.ForDisplay(), err)
	}
	if !strings.HasSuffix(base.Path, "/") {
		base.Path += "/"
	}
	// get sends a registry request; a status outside `ok` is an error.
	get := func(u *url.URL, ok ...int) (*http.Response, []byte, error) {
		req, err := http.NewRequest("GET", u.String(), nil)
		if err != nil {
			return nil, nil, err
		}
		if c, _ := services.CredentialsForHost(host); c != nil {
			c.PrepareRequest(req)
		}
		req.Header.Set("X-Terraform-Version", terraformVersion)
		req.Header.Set("User-Agent", userAgent)
		resp, err := client.Do(req)
		if err != nil {
			return nil, nil, err
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		for _, status := range ok {
			if err == nil && resp.StatusCode == status {
				return resp, body, nil
			}
		}
		if err == nil {
			err = fmt.Errorf("GET %s: %s %s", u, resp.Status, body)
		}
		return nil, nil, err
	}
	out := &summary{Source: source}

	// Versions: GET MODULE/versions, then the newest match.
	versionsURL := base.ResolveReference(&url.URL{Path: path.Join(module, "versions")})
	out.VersionsURL = versionsURL.String()
	_, body, err := get(versionsURL, http.StatusOK)
	if err != nil {
		return nil, err
	}
	var listing struct {
		Modules []struct {
			Versions []struct {
				Version string `json:"version"`
			} `json:"versions"`
		} `json:"modules"`
	}
	if err := json.Unmarshal(body, &listing); err != nil {
		return nil, fmt.Errorf("GET %s: %w", versionsURL, err)
	}
	if len(listing.Modules) < 1 {
		return nil, fmt.Errorf("GET %s: no modules in the answer", versionsURL)
	}
	var offered []string
	for _, v := range listing.Modules[0].Versions {
		offered = append(offered, v.Version)
	}
	chosen, err := newestMatch(offered, constraint)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	out.Version = chosen.String()

	// Download: the location is the X-Terraform-Get header of a 200 or 204.
	downloadURL := base.ResolveReference(&url.URL{Path: path.Join(module, chosen.String(), "download")})
	out.DownloadURL = downloadURL.String()
	resp, _, err := get(downloadURL, http.StatusOK, http.StatusNoContent)
	if err != nil {
		return nil, err
	}
	out.Status = resp.StatusCode
	location := resp.Header.Get("X-Terraform-Get")
	if location == "" {
		return nil, fmt.Errorf("GET %s: %s without an X-Terraform-Get header", downloadURL, resp.Status)
	}
	out.Location = location
	// Only a location that looks relative is resolved against the download
	// URL; anything else is a go-getter address and is left as it is.
	if strings.HasPrefix(location, "/") || strings.HasPrefix(location, "./") || strings.HasPrefix(location, "../") {
		rel, err := url.Parse(location)
		if err != nil {
			return nil, fmt.Errorf("X-Terraform-Get %q: %w", location, err)
		}
		location = downloadURL.ResolveReference(rel).String()
	}

	// Fetch the whole package, then pick the subfolder: the location's own
	// //SUBDIR joined with the source's, as Terraform does.
	packageAddr, locSubdir := getter.SourceDirSubdir(location)
	out.Package = packageAddr
	if err := os.RemoveAll(dest); err != nil {
		return nil, err
	}
	if err := fetchPackage(packageAddr, dest); err != nil {
		return nil, fmt.Errorf("downloading %s: %w", packageAddr, err)
	}
	out.Dir = filepath.Join(dest, filepath.FromSlash(path.Join(locSubdir, regSubdir)))
	if out.Files, err = listFiles(out.Dir); err != nil {
		return nil, fmt.Errorf("module folder: %w", err)
	}
	return out, nil
}

// newestMatch picks the newest offered version meeting the constraint. A
// pre-release is a candidate only when the constraint names it exactly
// (`1.0.0-rc1` or `= 1.0.0-rc1`), as Terraform's go-versions check does.
func newestMatch(offered []string, constraint string) (*version.Version, error) {
	var required version.Constraints
	if strings.TrimSpace(constraint) != "" {
		var err error
		if required, err = version.NewConstraint(constraint); err != nil {
			return nil, fmt.Errorf("version constraint %q: %w", constraint, err)
		}
	}
	var best *version.Version
	for _, s := range offered {
		v, err := version.NewVersion(s)
		if err != nil {
			continue // Terraform warns and ignores it
		}
		if v.Prerelease() != "" && !pinnedExactly(constraint, v) {
			continue
		}
		if required.Check(v) && (best == nil || v.GreaterThan(best)) {
			best = v
		}
	}
	if best == nil {
		return nil, fmt.Errorf("no version among %v matches %q", offered, constraint)
	}
	return best, nil
}

func pinnedExactly(constraint string, v *version.Version) bool {
	for _, part := range strings.Split(constraint, ",") {
		part = strings.TrimSpace(part)
		if strings.HasPrefix(part, "=") {
			part = strings.TrimSpace(part[1:])
		}
		if pinned, err := version.NewVersion(part); err == nil && pinned.Equal(v) && pinned.Prerelease() == v.Prerelease() {
			return true
		}
	}
	return false
}
