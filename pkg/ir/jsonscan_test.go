package ir

import "testing"

func TestEmptyJSONNode(t *testing.T) {
	for _, c := range []struct {
		in    string
		index int
		ok    bool
	}{
		{`{"graph":{"nodes":[{"name":"x"},{ }]}}`, 1, true},
		{`{"graph":{"nodes":[{}]}}`, 0, true},
		{`{"graph":{"nodes" : [ {"name":"a","args":[{}],"val":{"tuple":{}}} , {"name":"}{"}]}}`, 0, false},
		{`{"graph":{"nodes":[{"name":"\"nodes\":[{}]"}]}}`, 0, false},
		{`{"producer":"nodes","graph":{"nodes":[{"name":"x"}]},"submodules":[{"graph":{"nodes":[{"name":"y"},{}]}}]}`, 1, true},
		{`{"graph":{"nodes":[{"name":"x"`, 0, false},
	} {
		n, _, ok := emptyJSONNode([]byte(c.in))
		if ok != c.ok || ok && n != c.index {
			t.Errorf("%s: node %d, %v; want %d, %v", c.in, n, ok, c.index, c.ok)
		}
	}
}
