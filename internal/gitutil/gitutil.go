// Package gitutil asks git about the checkout hopctl runs in: its top
// level, commit, branch and remote (for SARIF's versionControlProvenance),
// and the files changed since a revision (lint --new-from-rev). It runs
// the git command; outside a checkout, or without git, the answers are
// errors.
package gitutil

import (
	"bytes"
	"fmt"
	"net/url"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
)

func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(errb.String())
		if msg == "" {
			msg = err.Error()
		}
		return "", fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return out.String(), nil
}

// TopLevel is the top directory of the checkout dir is in.
func TopLevel(dir string) (string, error) {
	out, err := git(dir, "rev-parse", "--show-toplevel")
	if err != nil {
		return "", err
	}
	return filepath.FromSlash(strings.TrimSpace(out)), nil
}

// Checkout describes a git checkout.
type Checkout struct {
	Top      string
	Revision string // HEAD's commit, "" before the first commit
	Branch   string // "" when HEAD is detached
	// RemoteURI is the origin remote as an absolute URI (scp-like
	// "git@host:owner/repo.git" becomes "https://host/owner/repo"); "" when
	// there is no remote.
	RemoteURI string
}

// Describe describes the checkout dir is in.
func Describe(dir string) (*Checkout, error) {
	top, err := TopLevel(dir)
	if err != nil {
		return nil, err
	}
	c := &Checkout{Top: top}
	if out, err := git(top, "rev-parse", "--verify", "--quiet", "HEAD"); err == nil {
		c.Revision = strings.TrimSpace(out)
	}
	if out, err := git(top, "symbolic-ref", "--quiet", "--short", "HEAD"); err == nil {
		c.Branch = strings.TrimSpace(out)
	}
	if out, err := git(top, "config", "--get", "remote.origin.url"); err == nil {
		c.RemoteURI = RemoteURI(strings.TrimSpace(out))
	}
	return c, nil
}

var scpLike = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`^(?:[^@/]+@)?([^:/]+):(.+)$`) })

// RemoteURI turns a git remote into an absolute URI without credentials or
// ".git": https and ssh URLs keep host and path; scp-like
// "git@github.com:o/r.git" becomes "https://github.com/o/r"; a local path
// becomes a file URI. "" when it cannot.
func RemoteURI(remote string) string {
	if remote == "" {
		return ""
	}
	if u, err := url.Parse(remote); err == nil && u.Scheme != "" && u.Host != "" {
		// http(s) keep their port; ssh and git remotes become https on the
		// default port.
		scheme, host := u.Scheme, u.Host
		if scheme != "http" && scheme != "https" {
			scheme, host = "https", u.Hostname()
		}
		return (&url.URL{Scheme: scheme, Host: host, Path: strings.TrimSuffix(u.Path, ".git")}).String()
	}
	if m := scpLike().FindStringSubmatch(remote); m != nil && !filepath.IsAbs(remote) {
		return (&url.URL{Scheme: "https", Host: m[1], Path: "/" + strings.TrimSuffix(strings.TrimPrefix(m[2], "/"), ".git")}).String()
	}
	if filepath.IsAbs(remote) {
		return (&url.URL{Scheme: "file", Path: filepath.ToSlash(remote)}).String()
	}
	return ""
}

// ChangedSince lists the files of the checkout dir is in that differ from
// revision rev (committed, staged or not) or are untracked and not
// ignored, as absolute paths. Deleted files are left out.
func ChangedSince(dir, rev string) (map[string]bool, error) {
	top, err := TopLevel(dir)
	if err != nil {
		return nil, err
	}
	if _, err := git(top, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("unknown revision %q", rev)
	}
	diff, err := git(top, "diff", "--name-only", "-z", "--diff-filter=d", rev, "--")
	if err != nil {
		return nil, err
	}
	untracked, err := git(top, "ls-files", "--others", "--exclude-standard", "-z")
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, p := range strings.Split(diff+untracked, "\x00") {
		if p != "" {
			out[filepath.Join(top, filepath.FromSlash(p))] = true
		}
	}
	return out, nil
}
