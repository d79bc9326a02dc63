package gitutil

import "testing"

func TestRemoteURI(t *testing.T) {
	for in, want := range map[string]string{
		"https://github.com/hopctl/hopctl.git":        "https://github.com/hopctl/hopctl",
		"https://user:token@github.com/hopctl/hopctl": "https://github.com/hopctl/hopctl",
		"git@github.com:hopctl/hopctl.git":            "https://github.com/hopctl/hopctl",
		"ssh://git@github.com/hopctl/hopctl.git":      "https://github.com/hopctl/hopctl",
		"http://gitea.local:3000/team/models.git":     "http://gitea.local:3000/team/models",
		"/srv/git/models.git":                         "file:///srv/git/models.git",
		"":                                            "",
		"models":                                      "",
	} {
		if got := RemoteURI(in); got != want {
			t.Errorf("RemoteURI(%q) = %q, want %q", in, got, want)
		}
	}
}
