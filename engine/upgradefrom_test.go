package engine_test

import (
	"strings"
	"testing"

	"github.com/seedfall/seedfall/engine"
	"github.com/seedfall/seedfall/internal/engineapi"
)

// TestSetUpgradeFrom: the revision replaces the from of every node with an upgrade and
// keeps its mode; nodes without one are left alone; a config without any, and a
// revision git could take for an option, are errors naming the config.
func TestSetUpgradeFrom(t *testing.T) {
	cfg, err := engine.ParseConfig([]byte(`{"nodes": [
  {"name": "a", "pkg": "./v2", "upgrade": {"from": "./v1"}},
  {"name": "b", "pkg": "./v2"},
  {"name": "c", "pkg": "./v2", "upgrade": {"from": "git:main", "mode": "alternate"}}],
  "workload": {"pkg": "./client"}}`))
	if err != nil {
		t.Fatal(err)
	}
	names, err := engineapi.SetUpgradeFrom(cfg, "3f2a1c0")
	if err != nil || strings.Join(names, ",") != "a,c" {
		t.Fatalf("nodes %v, %v; want a,c", names, err)
	}
	if u := cfg.Nodes[0].Upgrade; u.From != "git:3f2a1c0" || u.Mode != "" {
		t.Errorf("a: %+v, want from git:3f2a1c0 and its own mode", u)
	}
	if u := cfg.Nodes[2].Upgrade; u.From != "git:3f2a1c0" || u.Mode != engine.UpgradeAlternate {
		t.Errorf("c: %+v, want from git:3f2a1c0, alternate", u)
	}
	if cfg.Nodes[1].Upgrade != nil {
		t.Errorf("b gained an upgrade: %+v", cfg.Nodes[1].Upgrade)
	}
	if _, err := engineapi.SetUpgradeFrom(cfg, "--output=x"); err == nil || !strings.Contains(err.Error(), "does not name a git revision") {
		t.Errorf("an option as revision: %v", err)
	}

	none, err := engine.ParseConfig([]byte(`{"nodes": [{"name": "a", "pkg": "./v2"}], "workload": {"pkg": "./client"}}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := engineapi.SetUpgradeFrom(none, "main"); err == nil || !strings.Contains(err.Error(), `no node has an "upgrade" option`) {
		t.Errorf("a config without upgrade: %v, want an error saying no node has one", err)
	}
}
