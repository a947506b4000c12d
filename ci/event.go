package ci

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"
)

// Env is what a run knows about the world outside the sweep: the GitHub Actions
// environment variables it reads, an HTTP client for the REST API, and a clock for the
// shrink budget. EnvFromGetenv fills it from the process environment; tests fill it by
// hand, pointing APIURL at an httptest server and the files at t.TempDir().
type Env struct {
	EventName   string // GITHUB_EVENT_NAME: push, pull_request, schedule, workflow_dispatch, ...
	EventPath   string // GITHUB_EVENT_PATH: the event's JSON payload
	Repository  string // GITHUB_REPOSITORY: owner/name
	SHA         string // GITHUB_SHA
	Ref         string // GITHUB_REF
	APIURL      string // GITHUB_API_URL (default https://api.github.com)
	ServerURL   string // GITHUB_SERVER_URL (default https://github.com)
	RunID       int64  // GITHUB_RUN_ID: orders baseline writes of concurrent runs
	OutputPath  string // GITHUB_OUTPUT: step outputs; "" skips them
	SummaryPath string // GITHUB_STEP_SUMMARY: job summary; "" skips it
	// Workspace is GITHUB_WORKSPACE, the repository's root (/github/workspace in a
	// container action): annotation paths are relative to it. "" means the current
	// directory.
	Workspace string

	// HTTPClient talks to the REST API; nil means http.DefaultClient.
	HTTPClient *http.Client
	// Now reads the clock for the shrink budget only (never for anything that shapes a
	// report's bytes); nil means time.Now.
	Now func() time.Time
	// Actions is GITHUB_ACTIONS=true: the run is a workflow step, whose report directory
	// reaches the user as an artifact (replay commands name it by its base name).
	Actions bool
}

// EnvFromGetenv reads Env from environment variables (os.Getenv in production).
func EnvFromGetenv(getenv func(string) string) Env {
	runID, _ := strconv.ParseInt(getenv("GITHUB_RUN_ID"), 10, 64)
	return Env{
		Actions:     getenv("GITHUB_ACTIONS") == "true",
		EventName:   getenv("GITHUB_EVENT_NAME"),
		EventPath:   getenv("GITHUB_EVENT_PATH"),
		Repository:  getenv("GITHUB_REPOSITORY"),
		SHA:         getenv("GITHUB_SHA"),
		Ref:         getenv("GITHUB_REF"),
		APIURL:      getenv("GITHUB_API_URL"),
		ServerURL:   getenv("GITHUB_SERVER_URL"),
		RunID:       runID,
		OutputPath:  getenv("GITHUB_OUTPUT"),
		SummaryPath: getenv("GITHUB_STEP_SUMMARY"),
		Workspace:   getenv("GITHUB_WORKSPACE"),
	}
}

func (e Env) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e Env) apiURL() string {
	if e.APIURL == "" {
		return "https://api.github.com"
	}
	return e.APIURL
}

func (e Env) serverURL() string {
	if e.ServerURL == "" {
		return "https://github.com"
	}
	return e.ServerURL
}

// event is what a run needs from the triggering event.
type event struct {
	Name          string // push, pull_request, schedule, workflow_dispatch, or "" for a local run
	Owner, Repo   string // the repository the run belongs to (GITHUB_REPOSITORY)
	SHA           string // the commit swept: the PR head for pull_request, else GITHUB_SHA / the push's after
	Ref           string // refs/heads/main, refs/pull/7/merge, ...
	PR            int    // pull request number, 0 when not a pull request
	DefaultBranch string // the repository's default branch, from the payload
	Fork          bool   // a pull request from another repository (its token is read-only)
	// Base is the commit the change is measured against (input upgrade-from: base): a
	// pull request's base.sha, or a push's before (all zeros for a new branch). Taken
	// from the payload as given; the upgrade checks it is a commit hash.
	Base string
	// WorkflowRun is set for a workflow_run event: the run whose results publish mode
	// posts.
	WorkflowRun *workflowRun
}

// workflowRun is what publish mode takes from a workflow_run event: the pull request
// and head commit come from here, never from the artifact.
type workflowRun struct {
	ID         int64
	Event      string // the triggering run's event: pull_request for a pull request's sweep
	HeadSHA    string
	HeadBranch string
	HeadOwner  string // login of the head repository's owner (a fork's owner)
	HTMLURL    string // the triggering run's page
	// PRs are the pull requests GitHub lists for the run, with their head SHAs; empty
	// for a pull request from a fork.
	PRs []workflowRunPR
}

// workflowRunPR is one entry of workflow_run.pull_requests.
type workflowRunPR struct {
	Number  int
	HeadSHA string
}

// WritesBaseline reports whether this event may write the baseline: a push to the
// default branch, a scheduled run or a manual dispatch. Pull requests only read it.
func (ev event) WritesBaseline() bool {
	switch ev.Name {
	case "push":
		return ev.DefaultBranch != "" && ev.Ref == "refs/heads/"+ev.DefaultBranch
	case "schedule", "workflow_dispatch":
		return true
	}
	return false
}

// eventPayload is the subset of the webhook payloads the run reads.
type eventPayload struct {
	Ref         string `json:"ref"`
	After       string `json:"after"`
	Before      string `json:"before"`
	Number      int    `json:"number"`
	PullRequest *struct {
		Number int `json:"number"`
		Head   struct {
			SHA  string `json:"sha"`
			Repo *struct {
				FullName string `json:"full_name"`
			} `json:"repo"`
		} `json:"head"`
		Base struct {
			SHA string `json:"sha"`
		} `json:"base"`
	} `json:"pull_request"`
	Repository *struct {
		FullName      string `json:"full_name"`
		DefaultBranch string `json:"default_branch"`
	} `json:"repository"`
	WorkflowRun *struct {
		ID           int64  `json:"id"`
		Event        string `json:"event"`
		HeadSHA      string `json:"head_sha"`
		HeadBranch   string `json:"head_branch"`
		HTMLURL      string `json:"html_url"`
		PullRequests []struct {
			Number int `json:"number"`
			Head   struct {
				SHA string `json:"sha"`
			} `json:"head"`
		} `json:"pull_requests"`
		HeadRepository *struct {
			Owner struct {
				Login string `json:"login"`
			} `json:"owner"`
		} `json:"head_repository"`
	} `json:"workflow_run"`
}

// readEvent reads the event the run was triggered by. Without GITHUB_EVENT_PATH (a local
// run) it returns what the variables say and no error.
func readEvent(env Env) (event, error) {
	ev := event{Name: env.EventName, SHA: env.SHA, Ref: env.Ref}
	if env.Repository != "" {
		o, r, ok := strings.Cut(env.Repository, "/")
		if !ok || o == "" || r == "" {
			return event{}, fmt.Errorf("GITHUB_REPOSITORY: %q is not owner/name", env.Repository)
		}
		ev.Owner, ev.Repo = o, r
	}
	if env.EventPath == "" {
		return ev, nil
	}
	data, err := os.ReadFile(env.EventPath)
	if err != nil {
		return event{}, fmt.Errorf("read event (GITHUB_EVENT_PATH): %w", err)
	}
	var p eventPayload
	if err := json.Unmarshal(data, &p); err != nil {
		return event{}, fmt.Errorf("event file %s: invalid JSON: %w", env.EventPath, err)
	}
	if p.Repository != nil {
		ev.DefaultBranch = p.Repository.DefaultBranch
		if ev.Owner == "" {
			ev.Owner, ev.Repo, _ = strings.Cut(p.Repository.FullName, "/")
		}
	}
	switch ev.Name {
	case "push":
		if p.Ref != "" {
			ev.Ref = p.Ref
		}
		if p.After != "" && strings.Trim(p.After, "0") != "" {
			ev.SHA = p.After
		}
		ev.Base = p.Before
	case "pull_request", "pull_request_target":
		if p.PullRequest == nil {
			return event{}, fmt.Errorf("event file %s: %s event without a pull_request object", env.EventPath, ev.Name)
		}
		ev.PR = p.PullRequest.Number
		if ev.PR == 0 {
			ev.PR = p.Number
		}
		if p.PullRequest.Head.SHA == "" {
			return event{}, fmt.Errorf("event file %s: pull_request.head.sha is empty", env.EventPath)
		}
		ev.SHA = p.PullRequest.Head.SHA
		ev.Base = p.PullRequest.Base.SHA
		if hr := p.PullRequest.Head.Repo; hr != nil && p.Repository != nil && hr.FullName != p.Repository.FullName {
			ev.Fork = true
		}
	case "workflow_run":
		w := p.WorkflowRun
		if w == nil {
			return event{}, fmt.Errorf("event file %s: workflow_run event without a workflow_run object", env.EventPath)
		}
		wr := &workflowRun{ID: w.ID, Event: w.Event, HeadSHA: w.HeadSHA, HeadBranch: w.HeadBranch, HTMLURL: w.HTMLURL}
		if w.HeadRepository != nil {
			wr.HeadOwner = w.HeadRepository.Owner.Login
		}
		for _, pr := range w.PullRequests {
			wr.PRs = append(wr.PRs, workflowRunPR{Number: pr.Number, HeadSHA: pr.Head.SHA})
		}
		ev.WorkflowRun = wr
		ev.SHA = w.HeadSHA
	}
	return ev, nil
}
