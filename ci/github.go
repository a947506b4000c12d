package ci

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/google/go-github/v66/github"
)

// CommentMarker identifies seedfall's sticky PR comment: a run edits the comment that
// contains it rather than adding another.
const CommentMarker = "<!-- seedfall-report -->"

// statusContext is the commit status context seedfall sets.
const statusContext = "seedfall"

// newClient returns a go-github client for the API at apiURL (GITHUB_API_URL; GitHub
// Enterprise Server's is https://HOST/api/v3), authenticated with token when not empty.
func newClient(apiURL, token string, hc *http.Client) (*github.Client, error) {
	c := github.NewClient(hc)
	if token != "" {
		c = c.WithAuthToken(token)
	}
	if apiURL == "" {
		return c, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return nil, fmt.Errorf("GITHUB_API_URL: %q is not a URL", apiURL)
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
	}
	c.BaseURL = u
	return c, nil
}

// statusCode returns the HTTP status of a go-github error, or 0.
func statusCode(err error) int {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Response != nil {
		return er.Response.StatusCode
	}
	var ae *github.AcceptedError
	if errors.As(err, &ae) {
		return http.StatusAccepted
	}
	return 0
}

// readOnly reports whether err is the API refusing a write to a read-only token (a fork
// pull request's GITHUB_TOKEN, or a workflow without the permission).
func readOnly(err error) bool {
	return statusCode(err) == http.StatusForbidden
}

// branchStore keeps the baseline as a file on a data branch, read and written through
// the contents API; the version is the file's blob SHA, which the API compares on write
// (409 or 422 when it is stale). When the branch does not exist, the first Save creates
// it as an orphan branch holding only the baseline file.
type branchStore struct {
	Client      *github.Client
	Owner, Repo string
	Branch      string
	Path        string // path of the file in the branch
}

// Name returns "branch:NAME:PATH".
func (s branchStore) Name() string { return "branch:" + s.Branch + ":" + s.Path }

// Load reads the file; a missing file or branch is an empty baseline.
func (s branchStore) Load(ctx context.Context) (*Baseline, string, error) {
	fc, _, _, err := s.Client.Repositories.GetContents(ctx, s.Owner, s.Repo, s.Path, &github.RepositoryContentGetOptions{Ref: s.Branch})
	if statusCode(err) == http.StatusNotFound {
		return newBaseline(), "", nil
	}
	if err != nil {
		return nil, "", fmt.Errorf("read baseline %s: %w", s.Name(), err)
	}
	if fc == nil {
		return nil, "", &corruptError{Name: s.Name(), Err: errors.New("the path is a directory, not a file")}
	}
	text, err := fc.GetContent()
	if err != nil {
		return nil, fc.GetSHA(), &corruptError{Name: s.Name(), Err: err}
	}
	b, err := ParseBaseline(s.Name(), []byte(text))
	return b, fc.GetSHA(), err
}

// Save writes the file with the blob SHA it was read at (compare-and-swap).
func (s branchStore) Save(ctx context.Context, b *Baseline, version string) error {
	data, err := b.marshal()
	if err != nil {
		return err
	}
	if version == "" {
		exists, err := s.branchExists(ctx)
		if err != nil {
			return err
		}
		if !exists {
			return s.createBranch(ctx, data)
		}
	}
	opts := &github.RepositoryContentFileOptions{
		Message: github.String("seedfall: update baseline"),
		Content: data,
		Branch:  github.String(s.Branch),
	}
	if version != "" {
		opts.SHA = github.String(version)
	}
	_, _, err = s.Client.Repositories.UpdateFile(ctx, s.Owner, s.Repo, s.Path, opts)
	switch statusCode(err) {
	case 0:
		if err != nil {
			return err
		}
		return nil
	case http.StatusConflict, http.StatusUnprocessableEntity:
		return fmt.Errorf("%w (%v)", errConflict, err)
	}
	return err
}

func (s branchStore) branchExists(ctx context.Context) (bool, error) {
	_, _, err := s.Client.Git.GetRef(ctx, s.Owner, s.Repo, "heads/"+s.Branch)
	switch {
	case err == nil:
		return true, nil
	case statusCode(err) == http.StatusNotFound:
		return false, nil
	}
	return false, fmt.Errorf("look up branch %s: %w", s.Branch, err)
}

// createBranch creates the data branch as an orphan: a tree with the one file, a commit
// without parents, and the ref. A concurrent creator makes CreateRef answer 422, which
// is a conflict: the caller re-reads and merges.
func (s branchStore) createBranch(ctx context.Context, data []byte) error {
	tree, _, err := s.Client.Git.CreateTree(ctx, s.Owner, s.Repo, "", []*github.TreeEntry{{
		Path: github.String(s.Path), Mode: github.String("100644"), Type: github.String("blob"), Content: github.String(string(data)),
	}})
	if err != nil {
		return fmt.Errorf("create branch %s: tree: %w", s.Branch, err)
	}
	commit, _, err := s.Client.Git.CreateCommit(ctx, s.Owner, s.Repo, &github.Commit{
		Message: github.String("seedfall: start the baseline branch"),
		Tree:    &github.Tree{SHA: tree.SHA},
	}, nil)
	if err != nil {
		return fmt.Errorf("create branch %s: commit: %w", s.Branch, err)
	}
	_, _, err = s.Client.Git.CreateRef(ctx, s.Owner, s.Repo, &github.Reference{
		Ref: github.String("refs/heads/" + s.Branch), Object: &github.GitObject{SHA: commit.SHA},
	})
	if statusCode(err) == http.StatusUnprocessableEntity {
		return fmt.Errorf("%w (branch %s was created concurrently)", errConflict, s.Branch)
	}
	if err != nil {
		return fmt.Errorf("create branch %s: ref: %w", s.Branch, err)
	}
	return nil
}

// actionsBot is the login GitHub gives the Actions token (GITHUB_TOKEN) as a comment
// author.
const actionsBot = "github-actions[bot]"

// tokenLogin returns the login of the token's own identity: GET /user for a personal
// token; the Actions token may not call it (403) and writes as actionsBot.
func tokenLogin(ctx context.Context, c *github.Client) (string, error) {
	u, _, err := c.Users.Get(ctx, "")
	switch code := statusCode(err); {
	case err == nil && u.GetLogin() != "":
		return u.GetLogin(), nil
	case code == http.StatusForbidden || code == http.StatusUnauthorized || code == http.StatusNotFound:
		return actionsBot, nil
	case err == nil:
		return actionsBot, nil
	default:
		return "", fmt.Errorf("who is the token: %w", err)
	}
}

// upsertComment edits the pull request comment that carries CommentMarker and that the
// token's own identity wrote, or creates one. A comment with the marker written by anyone
// else (a pull request's author can paste the marker) is never edited. It returns
// whether it created the comment.
func upsertComment(ctx context.Context, c *github.Client, owner, repo string, pr int, body string) (created bool, err error) {
	me, err := tokenLogin(ctx, c)
	if err != nil {
		return false, err
	}
	opts := &github.IssueListCommentsOptions{ListOptions: github.ListOptions{PerPage: 100}}
	for {
		comments, resp, err := c.Issues.ListComments(ctx, owner, repo, pr, opts)
		if err != nil {
			return false, fmt.Errorf("list comments of #%d: %w", pr, err)
		}
		for _, cm := range comments {
			if strings.Contains(cm.GetBody(), CommentMarker) && strings.EqualFold(cm.GetUser().GetLogin(), me) {
				_, _, err := c.Issues.EditComment(ctx, owner, repo, cm.GetID(), &github.IssueComment{Body: github.String(body)})
				if err != nil {
					return false, fmt.Errorf("edit comment %d: %w", cm.GetID(), err)
				}
				return false, nil
			}
		}
		if resp.NextPage == 0 {
			break
		}
		opts.Page = resp.NextPage
	}
	if _, _, err := c.Issues.CreateComment(ctx, owner, repo, pr, &github.IssueComment{Body: github.String(body)}); err != nil {
		return false, fmt.Errorf("create comment on #%d: %w", pr, err)
	}
	return true, nil
}

// setStatus sets the "seedfall" commit status on sha.
func setStatus(ctx context.Context, c *github.Client, owner, repo, sha, state, description, target string) error {
	if len(description) > 140 { // the API's limit
		description = description[:137] + "..."
	}
	st := &github.RepoStatus{State: github.String(state), Description: github.String(description), Context: github.String(statusContext)}
	if target != "" {
		st.TargetURL = github.String(target)
	}
	if _, _, err := c.Repositories.CreateStatus(ctx, owner, repo, sha, st); err != nil {
		return fmt.Errorf("set status on %s: %w", shortSHA(sha), err)
	}
	return nil
}

func shortSHA(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

// checkName is the name of the check run seedfall creates.
const checkName = "seedfall"

// maxAnnotationsPerRequest is GitHub's cap on annotations in one check-run request;
// more are added by updating the run in batches of this size.
const maxAnnotationsPerRequest = 50

// createCheckRun creates the completed "seedfall" check run on sha with the summary and
// the annotations, the first maxAnnotationsPerRequest with the creation and the rest
// by updates of the same size. It returns the run's id.
func createCheckRun(ctx context.Context, c *github.Client, owner, repo, sha, conclusion, title, summary, detailsURL string, ann []*github.CheckRunAnnotation) (int64, error) {
	out := func(batch []*github.CheckRunAnnotation) *github.CheckRunOutput {
		return &github.CheckRunOutput{Title: github.String(title), Summary: github.String(summary), Annotations: batch}
	}
	first := ann[:min(len(ann), maxAnnotationsPerRequest)]
	opts := github.CreateCheckRunOptions{
		Name: checkName, HeadSHA: sha, Status: github.String("completed"), Conclusion: github.String(conclusion),
		Output: out(first),
	}
	if detailsURL != "" {
		opts.DetailsURL = github.String(detailsURL)
	}
	cr, _, err := c.Checks.CreateCheckRun(ctx, owner, repo, opts)
	if err != nil {
		return 0, fmt.Errorf("create check run on %s: %w", shortSHA(sha), err)
	}
	for i := len(first); i < len(ann); i += maxAnnotationsPerRequest {
		batch := ann[i:min(len(ann), i+maxAnnotationsPerRequest)]
		if _, _, err := c.Checks.UpdateCheckRun(ctx, owner, repo, cr.GetID(), github.UpdateCheckRunOptions{Name: checkName, Output: out(batch)}); err != nil {
			return cr.GetID(), fmt.Errorf("add annotations %d-%d to check run %d: %w", i+1, i+len(batch), cr.GetID(), err)
		}
	}
	return cr.GetID(), nil
}

// findPullRequest returns the number of the open pull request whose head is
// headOwner:headBranch at sha, for a workflow_run event whose pull_requests list is
// empty (GitHub leaves it empty for pull requests from forks).
func findPullRequest(ctx context.Context, c *github.Client, owner, repo, headOwner, headBranch, sha string) (int, error) {
	opts := &github.PullRequestListOptions{State: "open", Head: headOwner + ":" + headBranch, ListOptions: github.ListOptions{PerPage: 100}}
	prs, _, err := c.PullRequests.List(ctx, owner, repo, opts)
	if err != nil {
		return 0, fmt.Errorf("look up the pull request of %s:%s: %w", headOwner, headBranch, err)
	}
	var found []int
	for _, pr := range prs {
		if pr.GetHead().GetSHA() == sha {
			found = append(found, pr.GetNumber())
		}
	}
	switch len(found) {
	case 1:
		return found[0], nil
	case 0:
		return 0, fmt.Errorf("no open pull request from %s:%s has head %s (closed, or pushed to since the sweep)", headOwner, headBranch, shortSHA(sha))
	}
	return 0, fmt.Errorf("%d open pull requests from %s:%s have head %s", len(found), headOwner, headBranch, shortSHA(sha))
}
