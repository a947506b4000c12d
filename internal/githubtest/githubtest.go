// Package githubtest is a fake GitHub REST API for tests of seedfall's GitHub Actions
// integration (package ci and `seedfall ci`). It speaks the endpoints seedfall uses:
// issue comments (list with Link pagination, create, edit), commit statuses, contents
// GET/PUT with blob-SHA compare-and-swap (409 on a stale SHA), and the git
// refs/trees/commits calls that create an orphan branch, check runs (create, and update
// to add annotations, at most 50 per request as GitHub allows), and the pull request
// list filtered by head. With ReadOnly, writes of comments, statuses and check runs
// answer 403, as GitHub does for a fork pull request's token; with NoChecks only check
// runs do, as for a token without checks: write.
//
// Point the code under test at URL() (ci.Env.APIURL, or GITHUB_API_URL for the
// command) and inspect what it did with the accessors.
package githubtest

import (
	"crypto/sha1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// FakeGitHub is an httptest server speaking the REST endpoints seedfall uses. It starts
// with one branch, "main", holding no files; New closes it when the test ends. Any
// other request fails the test.
type FakeGitHub struct {
	// ReadOnly makes comment and status writes answer 403, as for a fork pull
	// request's token. Set it before the code under test runs.
	ReadOnly bool
	// NoChecks makes check-run writes answer 403, as for a token without checks: write.
	NoChecks bool
	// BeforePut, when set, runs (unlocked) before each contents PUT is judged. Set it
	// before the code under test runs.
	BeforePut func()
	// Login is the identity of the token the code under test uses; comments it creates
	// are written by that user. Empty means the Actions token, "github-actions[bot]",
	// for which GET /user answers 403 as GitHub does; otherwise GET /user answers it.
	Login string

	t   testing.TB
	srv *httptest.Server

	mu           sync.Mutex
	comments     map[int][]*Comment // by PR number
	nextID       int64
	statuses     []Status
	branches     map[string]map[string][]byte // branch → path → content
	trees        map[string]map[string][]byte // tree sha → files
	commits      map[string]string            // commit sha → tree sha
	puts         int                          // successful contents PUTs
	conflict     int                          // contents PUTs refused as stale
	foreignEdits int                          // edits of comments another user wrote
	checks       []*CheckRun
	pulls        []Pull
	writes       int // successful check-run writes
	// createdComments counts comments the code under test created or edited.
	createdComments int
}

// CheckRun is a check run with the annotations added to it so far.
type CheckRun struct {
	ID          int64        `json:"id"`
	Name        string       `json:"name"`
	HeadSHA     string       `json:"head_sha"`
	Status      string       `json:"status"`
	Conclusion  string       `json:"conclusion"`
	DetailsURL  string       `json:"details_url"`
	Title       string       `json:"-"`
	Summary     string       `json:"-"`
	Annotations []Annotation `json:"-"`
	// Requests counts the create and update requests that carried annotations.
	Requests int `json:"-"`
}

// Annotation is a check-run annotation.
type Annotation struct {
	Path            string `json:"path"`
	StartLine       int    `json:"start_line"`
	EndLine         int    `json:"end_line"`
	AnnotationLevel string `json:"annotation_level"`
	Title           string `json:"title"`
	Message         string `json:"message"`
}

// Pull is an open pull request, as the list endpoint shows it.
type Pull struct {
	Number     int
	HeadOwner  string // login of the head repository's owner
	HeadBranch string
	HeadSHA    string
}

// Comment is an issue (pull request) comment.
type Comment struct {
	ID   int64  `json:"id"`
	Body string `json:"body"`
	User User   `json:"user"`
}

// User is a comment's author.
type User struct {
	Login string `json:"login"`
	Type  string `json:"type"` // "User" or "Bot"
}

// ActionsBot is the author of comments written with the Actions token.
const ActionsBot = "github-actions[bot]"

// Status is a commit status, with the commit it was set on.
type Status struct {
	SHA         string
	State       string `json:"state"`
	Description string `json:"description"`
	Context     string `json:"context"`
}

// New starts a fake GitHub for the test; it is closed when the test ends.
func New(t testing.TB) *FakeGitHub {
	f := &FakeGitHub{
		t: t, comments: map[int][]*Comment{}, nextID: 1000,
		branches: map[string]map[string][]byte{"main": {}},
		trees:    map[string]map[string][]byte{}, commits: map[string]string{},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /user", f.getUser)
	mux.HandleFunc("GET /repos/{o}/{r}/issues/{n}/comments", f.listComments)
	mux.HandleFunc("POST /repos/{o}/{r}/issues/{n}/comments", f.createComment)
	mux.HandleFunc("PATCH /repos/{o}/{r}/issues/comments/{id}", f.editComment)
	mux.HandleFunc("POST /repos/{o}/{r}/statuses/{sha}", f.createStatus)
	mux.HandleFunc("GET /repos/{o}/{r}/contents/{path...}", f.getContents)
	mux.HandleFunc("PUT /repos/{o}/{r}/contents/{path...}", f.putContents)
	mux.HandleFunc("GET /repos/{o}/{r}/git/ref/{ref...}", f.getRef)
	mux.HandleFunc("POST /repos/{o}/{r}/git/trees", f.createTree)
	mux.HandleFunc("POST /repos/{o}/{r}/git/commits", f.createCommit)
	mux.HandleFunc("POST /repos/{o}/{r}/git/refs", f.createRef)
	mux.HandleFunc("POST /repos/{o}/{r}/check-runs", f.createCheck)
	mux.HandleFunc("PATCH /repos/{o}/{r}/check-runs/{id}", f.updateCheck)
	mux.HandleFunc("GET /repos/{o}/{r}/pulls", f.listPulls)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("fake GitHub: unexpected %s %s", r.Method, r.URL)
		http.NotFound(w, r)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func apiError(w http.ResponseWriter, code int, msg string) {
	writeJSON(w, code, map[string]string{"message": msg})
}

func blobSHA(b []byte) string {
	h := sha1.Sum([]byte(fmt.Sprintf("blob %d\x00%s", len(b), b)))
	return hex.EncodeToString(h[:])
}

// tokenUser is the author of comments the code under test writes.
func (f *FakeGitHub) tokenUser() User {
	if f.Login == "" {
		return User{Login: ActionsBot, Type: "Bot"}
	}
	return User{Login: f.Login, Type: "User"}
}

func (f *FakeGitHub) getUser(w http.ResponseWriter, r *http.Request) {
	if f.Login == "" {
		apiError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	writeJSON(w, http.StatusOK, f.tokenUser())
}

func (f *FakeGitHub) listComments(w http.ResponseWriter, r *http.Request) {
	n, _ := strconv.Atoi(r.PathValue("n"))
	per, _ := strconv.Atoi(r.URL.Query().Get("per_page"))
	if per <= 0 {
		per = 30
	}
	page, _ := strconv.Atoi(r.URL.Query().Get("page"))
	if page <= 0 {
		page = 1
	}
	f.mu.Lock()
	all := append([]*Comment(nil), f.comments[n]...)
	f.mu.Unlock()
	lo := min((page-1)*per, len(all))
	hi := min(lo+per, len(all))
	if hi < len(all) {
		next := *r.URL
		q := next.Query()
		q.Set("page", strconv.Itoa(page+1))
		next.RawQuery = q.Encode()
		w.Header().Set("Link", fmt.Sprintf(`<%s%s>; rel="next"`, f.srv.URL, next.RequestURI()))
	}
	writeJSON(w, http.StatusOK, all[lo:hi])
}

func (f *FakeGitHub) createComment(w http.ResponseWriter, r *http.Request) {
	if f.ReadOnly {
		apiError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	n, _ := strconv.Atoi(r.PathValue("n"))
	var c Comment
	json.NewDecoder(r.Body).Decode(&c)
	f.mu.Lock()
	f.nextID++
	c.ID = f.nextID
	c.User = f.tokenUser()
	f.comments[n] = append(f.comments[n], &c)
	f.createdComments++
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, c)
}

func (f *FakeGitHub) editComment(w http.ResponseWriter, r *http.Request) {
	if f.ReadOnly {
		apiError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in Comment
	json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, cs := range f.comments {
		for _, c := range cs {
			if c.ID == id {
				if c.User != f.tokenUser() {
					// GitHub lets a repository's token edit anyone's comment; record it
					// so that tests can tell.
					f.foreignEdits++
				}
				c.Body = in.Body
				f.createdComments++
				writeJSON(w, http.StatusOK, c)
				return
			}
		}
	}
	apiError(w, http.StatusNotFound, "Not Found")
}

func (f *FakeGitHub) createStatus(w http.ResponseWriter, r *http.Request) {
	if f.ReadOnly {
		apiError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	var s Status
	json.NewDecoder(r.Body).Decode(&s)
	s.SHA = r.PathValue("sha")
	switch s.State {
	case "success", "failure", "error", "pending":
	default:
		apiError(w, http.StatusUnprocessableEntity, "bad state "+s.State)
		return
	}
	f.mu.Lock()
	f.statuses = append(f.statuses, s)
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, s)
}

func (f *FakeGitHub) getContents(w http.ResponseWriter, r *http.Request) {
	ref := r.URL.Query().Get("ref")
	f.mu.Lock()
	defer f.mu.Unlock()
	files, ok := f.branches[ref]
	if !ok {
		apiError(w, http.StatusNotFound, "No commit found for the ref "+ref)
		return
	}
	data, ok := files[r.PathValue("path")]
	if !ok {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	// GitHub wraps base64 content at 60 columns.
	enc := base64.StdEncoding.EncodeToString(data)
	var lines []string
	for len(enc) > 60 {
		lines = append(lines, enc[:60])
		enc = enc[60:]
	}
	lines = append(lines, enc)
	writeJSON(w, http.StatusOK, map[string]any{
		"type": "file", "encoding": "base64", "path": r.PathValue("path"),
		"sha": blobSHA(data), "content": strings.Join(lines, "\n") + "\n",
	})
}

func (f *FakeGitHub) putContents(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Message string `json:"message"`
		Content []byte `json:"content"`
		SHA     string `json:"sha"`
		Branch  string `json:"branch"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if f.BeforePut != nil {
		f.BeforePut()
	}
	path := r.PathValue("path")
	f.mu.Lock()
	defer f.mu.Unlock()
	files, ok := f.branches[in.Branch]
	if !ok {
		apiError(w, http.StatusNotFound, "Branch "+in.Branch+" not found")
		return
	}
	cur, exists := files[path]
	switch {
	case exists && in.SHA == "":
		f.conflict++
		apiError(w, http.StatusUnprocessableEntity, `Invalid request. "sha" wasn't supplied.`)
		return
	case exists && in.SHA != blobSHA(cur), !exists && in.SHA != "":
		f.conflict++
		apiError(w, http.StatusConflict, path+" does not match "+in.SHA)
		return
	}
	files[path] = in.Content
	f.puts++
	writeJSON(w, http.StatusOK, map[string]any{"content": map[string]string{"sha": blobSHA(in.Content)}})
}

func (f *FakeGitHub) getRef(w http.ResponseWriter, r *http.Request) {
	ref := r.PathValue("ref")
	f.mu.Lock()
	_, ok := f.branches[strings.TrimPrefix(ref, "heads/")]
	f.mu.Unlock()
	if !ok {
		apiError(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"ref": "refs/" + ref, "object": map[string]string{"sha": "0000000000000000000000000000000000000001"}})
}

func (f *FakeGitHub) createTree(w http.ResponseWriter, r *http.Request) {
	var in struct {
		BaseTree string `json:"base_tree"`
		Tree     []struct {
			Path, Mode, Type, Content string
		} `json:"tree"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	if in.BaseTree != "" {
		apiError(w, http.StatusUnprocessableEntity, "an orphan branch's tree has no base")
		return
	}
	files := map[string][]byte{}
	var keys []string
	for _, e := range in.Tree {
		files[e.Path] = []byte(e.Content)
		keys = append(keys, e.Path+"\x00"+e.Content)
	}
	sort.Strings(keys)
	sha := blobSHA([]byte(strings.Join(keys, "\x01")))
	f.mu.Lock()
	f.trees[sha] = files
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
}

func (f *FakeGitHub) createCommit(w http.ResponseWriter, r *http.Request) {
	var in struct {
		Message string   `json:"message"`
		Tree    string   `json:"tree"`
		Parents []string `json:"parents"`
	}
	json.NewDecoder(r.Body).Decode(&in)
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.trees[in.Tree]; !ok || len(in.Parents) != 0 {
		apiError(w, http.StatusUnprocessableEntity, "want an orphan commit of a known tree")
		return
	}
	sha := blobSHA([]byte("commit " + in.Tree + in.Message))
	f.commits[sha] = in.Tree
	writeJSON(w, http.StatusCreated, map[string]any{"sha": sha})
}

func (f *FakeGitHub) createRef(w http.ResponseWriter, r *http.Request) {
	var in struct{ Ref, SHA string }
	json.NewDecoder(r.Body).Decode(&in)
	branch := strings.TrimPrefix(in.Ref, "refs/heads/")
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.branches[branch]; ok {
		apiError(w, http.StatusUnprocessableEntity, "Reference already exists")
		return
	}
	tree, ok := f.commits[in.SHA]
	if !ok {
		apiError(w, http.StatusUnprocessableEntity, "Object does not exist")
		return
	}
	files := map[string][]byte{}
	for p, c := range f.trees[tree] {
		files[p] = c
	}
	f.branches[branch] = files
	writeJSON(w, http.StatusCreated, map[string]any{"ref": in.Ref, "object": map[string]string{"sha": in.SHA}})
}

type checkOutput struct {
	Title       string       `json:"title"`
	Summary     string       `json:"summary"`
	Annotations []Annotation `json:"annotations"`
}

// checkAnnotations validates a request's annotations as GitHub does.
func checkAnnotations(w http.ResponseWriter, out *checkOutput) bool {
	if out == nil {
		return true
	}
	if len(out.Annotations) > 50 {
		apiError(w, http.StatusUnprocessableEntity, fmt.Sprintf("%d annotations in one request; at most 50", len(out.Annotations)))
		return false
	}
	if len(out.Summary) > 65535 {
		apiError(w, http.StatusUnprocessableEntity, "output.summary is too long")
		return false
	}
	for _, a := range out.Annotations {
		switch {
		case a.Path == "" || a.StartLine < 1 || a.EndLine < a.StartLine || a.Message == "":
			apiError(w, http.StatusUnprocessableEntity, fmt.Sprintf("invalid annotation %+v", a))
			return false
		case a.AnnotationLevel != "notice" && a.AnnotationLevel != "warning" && a.AnnotationLevel != "failure":
			apiError(w, http.StatusUnprocessableEntity, "bad annotation_level "+a.AnnotationLevel)
			return false
		}
	}
	return true
}

func (f *FakeGitHub) createCheck(w http.ResponseWriter, r *http.Request) {
	if f.ReadOnly || f.NoChecks {
		apiError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	var in struct {
		CheckRun
		Output *checkOutput `json:"output"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if in.Name == "" || len(in.HeadSHA) != 40 {
		apiError(w, http.StatusUnprocessableEntity, "name and head_sha are required")
		return
	}
	if in.Conclusion != "" && in.Conclusion != "success" && in.Conclusion != "failure" && in.Conclusion != "neutral" {
		apiError(w, http.StatusUnprocessableEntity, "bad conclusion "+in.Conclusion)
		return
	}
	if !checkAnnotations(w, in.Output) {
		return
	}
	f.mu.Lock()
	f.nextID++
	c := in.CheckRun
	c.ID = f.nextID
	if in.Output != nil {
		c.Title, c.Summary, c.Annotations = in.Output.Title, in.Output.Summary, in.Output.Annotations
		if len(in.Output.Annotations) > 0 {
			c.Requests++
		}
	}
	f.checks = append(f.checks, &c)
	f.writes++
	f.mu.Unlock()
	writeJSON(w, http.StatusCreated, c)
}

func (f *FakeGitHub) updateCheck(w http.ResponseWriter, r *http.Request) {
	if f.ReadOnly || f.NoChecks {
		apiError(w, http.StatusForbidden, "Resource not accessible by integration")
		return
	}
	id, _ := strconv.ParseInt(r.PathValue("id"), 10, 64)
	var in struct {
		Output *checkOutput `json:"output"`
	}
	if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
		apiError(w, http.StatusBadRequest, err.Error())
		return
	}
	if !checkAnnotations(w, in.Output) {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.checks {
		if c.ID == id {
			if in.Output != nil {
				// As GitHub does, an update's annotations are added to the run's.
				c.Annotations = append(c.Annotations, in.Output.Annotations...)
				c.Title, c.Summary = in.Output.Title, in.Output.Summary
				if len(in.Output.Annotations) > 0 {
					c.Requests++
				}
			}
			f.writes++
			writeJSON(w, http.StatusOK, c)
			return
		}
	}
	apiError(w, http.StatusNotFound, "Not Found")
}

func (f *FakeGitHub) listPulls(w http.ResponseWriter, r *http.Request) {
	owner, branch, _ := strings.Cut(r.URL.Query().Get("head"), ":")
	f.mu.Lock()
	defer f.mu.Unlock()
	out := []map[string]any{}
	for _, p := range f.pulls {
		if r.URL.Query().Get("head") != "" && (p.HeadOwner != owner || p.HeadBranch != branch) {
			continue
		}
		out = append(out, map[string]any{"number": p.Number, "head": map[string]any{
			"sha": p.HeadSHA, "ref": p.HeadBranch, "label": p.HeadOwner + ":" + p.HeadBranch}})
	}
	writeJSON(w, http.StatusOK, out)
}

// AddPull adds an open pull request.
func (f *FakeGitHub) AddPull(p Pull) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pulls = append(f.pulls, p)
}

// CheckRuns returns copies of the check runs created so far, oldest first.
func (f *FakeGitHub) CheckRuns() []CheckRun {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]CheckRun, 0, len(f.checks))
	for _, c := range f.checks {
		cc := *c
		cc.Annotations = append([]Annotation(nil), c.Annotations...)
		out = append(out, cc)
	}
	return out
}

// LastCheck returns the latest check run; it fails the test when none was created.
func (f *FakeGitHub) LastCheck(t testing.TB) CheckRun {
	t.Helper()
	cs := f.CheckRuns()
	if len(cs) == 0 {
		t.Fatal("no check run was created")
	}
	return cs[len(cs)-1]
}

// Writes counts every successful write: comments created or edited, statuses, check
// runs created or updated, contents PUTs.
func (f *FakeGitHub) Writes() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.writes + len(f.statuses) + f.puts + f.createdComments
}

// URL is the API base URL (GITHUB_API_URL).
func (f *FakeGitHub) URL() string { return f.srv.URL }

// Client is an HTTP client for the server.
func (f *FakeGitHub) Client() *http.Client { return f.srv.Client() }

// AddComment adds a comment to pull request pr, as another user ("pr-author") might,
// and returns it.
func (f *FakeGitHub) AddComment(pr int, body string) Comment {
	return f.AddCommentAs(pr, User{Login: "pr-author", Type: "User"}, body)
}

// AddCommentAs adds a comment written by u to pull request pr and returns it.
func (f *FakeGitHub) AddCommentAs(pr int, u User, body string) Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.nextID++
	c := &Comment{ID: f.nextID, Body: body, User: u}
	f.comments[pr] = append(f.comments[pr], c)
	return *c
}

// Comments returns a copy of pull request pr's comments, oldest first.
func (f *FakeGitHub) Comments(pr int) []Comment {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]Comment, 0, len(f.comments[pr]))
	for _, c := range f.comments[pr] {
		out = append(out, *c)
	}
	return out
}

// MarkerComments returns a copy of pull request pr's comments whose body contains
// marker (ci.CommentMarker for seedfall's sticky comment), oldest first.
func (f *FakeGitHub) MarkerComments(pr int, marker string) []Comment {
	var out []Comment
	for _, c := range f.Comments(pr) {
		if strings.Contains(c.Body, marker) {
			out = append(out, c)
		}
	}
	return out
}

// ForeignEdits counts the edits of comments that another user than the token's wrote.
func (f *FakeGitHub) ForeignEdits() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.foreignEdits
}

// Statuses returns the commit statuses set so far, oldest first.
func (f *FakeGitHub) Statuses() []Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Status(nil), f.statuses...)
}

// LastStatus returns the latest commit status; it fails the test when none was set.
func (f *FakeGitHub) LastStatus(t testing.TB) Status {
	t.Helper()
	st := f.Statuses()
	if len(st) == 0 {
		t.Fatal("no commit status was set")
	}
	return st[len(st)-1]
}

// SetBranch creates (or replaces) branch with the given files, path → content.
func (f *FakeGitHub) SetBranch(branch string, files map[string][]byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m := make(map[string][]byte, len(files))
	for p, c := range files {
		m[p] = append([]byte(nil), c...)
	}
	f.branches[branch] = m
}

// File returns a copy of the file at path on branch, and whether it exists.
func (f *FakeGitHub) File(branch, path string) ([]byte, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.branches[branch][path]
	return append([]byte(nil), b...), ok
}

// Puts counts the contents PUTs that succeeded.
func (f *FakeGitHub) Puts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.puts
}

// Conflicts counts the contents PUTs refused for a stale or missing blob SHA.
func (f *FakeGitHub) Conflicts() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.conflict
}
