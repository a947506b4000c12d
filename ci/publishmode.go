package ci

import (
	"context"
	"errors"
	"fmt"
)

// publishMode is `seedfall ci -publish DIR` on a workflow_run event: it posts what a
// pull request's sweep left in its artifact, and never sweeps, checks out or runs
// anything. The pull request and head commit come from the event (the artifact's
// copies must match them); the artifact is read with readArtifact's caps and checks,
// and the comment and check are rendered here. A refused artifact is an error (exit 2)
// with nothing posted.
func (r *runner) publishMode(ctx context.Context) (int, error) {
	ev := r.ev
	if ev.Name != "workflow_run" || ev.WorkflowRun == nil {
		return 0, fmt.Errorf("input publish: publish mode runs on workflow_run events (a sweep's run completing), not on %q", ev.Name)
	}
	wr := ev.WorkflowRun
	if wr.Event != "pull_request" {
		r.printf("seedfall ci: publish: run %d was triggered by %q, not by a pull request; nothing to publish (push and scheduled runs publish themselves)", wr.ID, wr.Event)
		return ExitPass, nil
	}
	if !reSHA.MatchString(wr.HeadSHA) {
		return 0, fmt.Errorf("event: workflow_run.head_sha %q is not a commit SHA", clipText(wr.HeadSHA))
	}
	if r.client == nil {
		return 0, errors.New("publish mode needs GITHUB_REPOSITORY")
	}
	if r.in.Token == "" {
		return 0, errors.New("input token: publish mode needs a token with pull-requests: write and checks: write")
	}
	pr := 0
	for _, p := range wr.PRs {
		if p.HeadSHA == wr.HeadSHA {
			if pr != 0 && pr != p.Number {
				return 0, fmt.Errorf("event: workflow_run lists pull requests #%d and #%d at %s", pr, p.Number, shortSHA(wr.HeadSHA))
			}
			pr = p.Number
		}
	}
	if pr == 0 {
		// GitHub lists no pull requests for a fork's run: find it by its head.
		if wr.HeadOwner == "" || wr.HeadBranch == "" {
			return 0, errors.New("event: workflow_run names no pull request and no head repository and branch to find it by")
		}
		var err error
		if pr, err = findPullRequest(ctx, r.client, ev.Owner, ev.Repo, wr.HeadOwner, wr.HeadBranch, wr.HeadSHA); err != nil {
			return 0, err
		}
	}

	a, err := readArtifact(r.in.Publish)
	if err != nil {
		return 0, err
	}
	if a.PR != pr {
		return 0, &artifactError{File: a.file, Field: "pr", Msg: fmt.Sprintf("#%d, but the workflow_run event is for #%d (a forged or stale artifact)", a.PR, pr)}
	}
	if a.HeadSHA != wr.HeadSHA {
		return 0, &artifactError{File: a.file, Field: "head_sha", Msg: fmt.Sprintf("%s, but the workflow_run event's head is %s (a forged or stale artifact)", a.HeadSHA, wr.HeadSHA)}
	}
	d, places := a.data(r.in.FailOn, wr.HeadSHA, wr.HTMLURL)
	r.printf("seedfall ci: publishing run %d for PR #%d at %s: %d new, %d known, %d fixed: %s", wr.ID, pr, shortSHA(wr.HeadSHA), d.Summary.New, d.Summary.Known, d.Summary.Fixed, d.Summary.Conclusion)
	pub := pr
	if !r.in.Comment {
		pub = 0
	}
	if skipped := r.post(ctx, d, places, pub, wr.HeadSHA); len(skipped) > 0 {
		r.action.Warningf("seedfall: publish: the token is read-only: skipped %v; give the publishing workflow pull-requests: write and checks: write", skipped)
	}
	if r.env.OutputPath != "" {
		if err := r.setOutputs(d); err != nil {
			return 0, err
		}
	}
	return ExitPass, nil
}
