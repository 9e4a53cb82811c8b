package notify

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/useprickle/prickle/shared/domain/step"
	"github.com/useprickle/prickle/shared/domain/task"
)

// Slack's limits: header text 150 characters, a text 3000 (2000 kept for
// one fact, so that a message of ten stays small).
const (
	slackHeaderMax  = 150
	slackTextMax    = 3000
	slackFactMax    = 2000
	evidenceTextMax = 300
)

// message is one notification in both forms, built once per event.
type message struct {
	subject string
	text    string // the email body
	notice  string // Slack's fallback (notification) text; the subject when empty
	blocks  []any
	links   []string
}

func (m message) email(to string) Email {
	return Email{To: to, Subject: m.subject, Text: m.text, Links: m.links}
}

func (m message) slack(channel string) SlackMessage {
	blocks, err := marshalPlain(m.blocks)
	if err != nil {
		blocks = nil // only strings and maps: cannot fail
	}
	notice := m.notice
	if notice == "" {
		notice = m.subject
	}
	// The notification text is parsed for links and mentions: escaped, an
	// agent's <!channel> in a subject stays text.
	return SlackMessage{Channel: channel, Subject: m.subject, Text: esc(notice), Blocks: blocks, Links: m.links}
}

// FormatAmount writes an amount as "12.5 USD", or "" when there is none.
func FormatAmount(a *step.Amount) string {
	if a == nil {
		return ""
	}
	return strconv.FormatFloat(a.Value, 'f', -1, 64) + " " + a.Unit
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// stepFacts is the exact call, line by line, as both email and Slack show it.
func stepFacts(s step.Step) [][2]string {
	facts := [][2]string{{"Tool", s.ToolName}}
	if does := step.Summary(s.ToolName, s.Input); does != "" {
		facts = append(facts, [2]string{"Does", does})
	}
	facts = append(facts, [][2]string{
		{"Kind", orDash(s.Kind)},
		{"Target", orDash(s.Target)},
		{"Amount", orDash(FormatAmount(s.Amount))},
		{"Reason", orDash(s.Reason)},
		{"Agent", s.Agent},
		{"Task", s.TaskID + " (project " + s.Project + ")"},
	}...)
	if s.BudgetNote != "" {
		facts = append(facts, [2]string{"Budget", s.BudgetNote})
	}
	return facts
}

func factLines(facts [][2]string) string {
	var b strings.Builder
	for _, f := range facts {
		fmt.Fprintf(&b, "%-8s %s\n", f[0]+":", f[1])
	}
	return b.String()
}

// stepRequestMessage asks the owner about one exact call; token is the
// signed approval-link token (url is its page), which the Slack buttons carry.
func stepRequestMessage(s step.Step, token, url string, expires time.Time) message {
	kind := s.Kind
	subject := fmt.Sprintf("Approve %s for %s? (%s)", s.ToolName, s.Agent, stepAbout(s))
	input := PrettyInput(s.Input, InputEmailMax)
	var b strings.Builder
	fmt.Fprintf(&b, "%s asks before %s call. It will make exactly this call, once, if you approve.\n\n", s.Agent, article(kind))
	b.WriteString(factLines(stepFacts(s)))
	fmt.Fprintf(&b, "\nInput:\n%s\n\n", input)
	fmt.Fprintf(&b, "Approve or refuse here (opening the link changes nothing; only the button on the page decides):\n%s\n\n", url)
	fmt.Fprintf(&b, "The link works until %s, and the step can be decided once.\n", stamp(expires))

	blocks := []any{
		header(subject),
		richText(paragraph(bold(s.Agent), literal(fmt.Sprintf(" asks before %s call. It will make exactly this call, once, if you approve.", article(kind))))),
		factsBlock(stepFacts(s)),
		inputBlock("Input", s.Input),
		decideActions(token, url, true),
		contextBlock(decideNote(ownerOf(s.Agent), expires)),
	}
	return message{subject: subject, text: b.String(), blocks: blocks, links: []string{url}}
}

// stepAbout says in a subject line what the step is: its kind when the run
// said it, else what the call does (a permission layer sends only the call).
func stepAbout(s step.Step) string {
	if s.Kind != "" {
		return fmt.Sprintf("%s step on task %s", s.Kind, s.TaskID)
	}
	if does := step.Summary(s.ToolName, s.Input); does != "" {
		return fmt.Sprintf("to %s, on task %s", does, s.TaskID)
	}
	return "a step on task " + s.TaskID
}

// stepOutcome says what became of a step: who decided and when, or that it expired.
func stepOutcome(s step.Step) string {
	switch s.Status {
	case step.Approved, step.Consumed:
		if len(s.Edited) > 0 {
			return fmt.Sprintf("Approved as edited by %s at %s: the run may make the edited call (below) instead of the one it asked, once, within %d minutes.",
				s.DecidedBy, decidedAt(s), int(step.UseWindow/time.Minute))
		}
		return fmt.Sprintf("Approved by %s at %s: the run may make exactly this call, once, within %d minutes.", s.DecidedBy, decidedAt(s), int(step.UseWindow/time.Minute))
	case step.Refused:
		out := fmt.Sprintf("Refused by %s at %s.", s.DecidedBy, decidedAt(s))
		if s.Message != "" {
			out += fmt.Sprintf(" Message: %q", s.Message)
		}
		return out
	case step.Expired:
		return fmt.Sprintf("Expired at %s: nobody decided in time, so the call is not allowed.", stamp(s.ExpiresAt))
	case step.Withdrawn:
		return "Withdrawn: the run asked for another step instead."
	}
	return "Now " + string(s.Status) + "."
}

func decidedAt(s step.Step) string {
	if s.DecidedAt == nil {
		return "an unknown time"
	}
	return stamp(*s.DecidedAt)
}

// stepSettledMessage tells the owner a step was decided or expired; Slack shows it in place of the request.
func stepSettledMessage(s step.Step) message {
	verb := string(s.Status)
	subject := fmt.Sprintf("%s step: %s for %s on task %s", strings.ToUpper(verb[:1])+verb[1:], s.ToolName, s.Agent, s.TaskID)
	outcome := stepOutcome(s)
	b, blocks := settledOpening(subject, outcome, stepFacts(s))
	if len(s.Edited) > 0 {
		edited := "Input as " + s.DecidedBy + " edited it"
		fmt.Fprintf(b, "\nInput as asked:\n%s\n\n%s:\n%s\n", PrettyInput(s.Input, InputEmailMax), edited, PrettyInput(s.Edited, InputEmailMax))
		blocks = append(blocks, inputBlock("Input as asked", s.Input), inputBlock(edited, s.Edited))
	} else {
		fmt.Fprintf(b, "\nInput:\n%s\n", PrettyInput(s.Input, InputEmailMax))
		blocks = append(blocks, inputBlock("Input", s.Input))
	}
	return message{subject: subject, text: b.String(), notice: outcome, blocks: blocks, links: []string{}}
}

// settledOpening is how a message that tells the owner what became of a step
// or a result opens, in its text and its Slack blocks: the outcome, then the
// facts.
func settledOpening(subject, outcome string, facts [][2]string) (*strings.Builder, []any) {
	b := &strings.Builder{}
	b.WriteString(outcome + "\n\n")
	b.WriteString(factLines(facts))
	return b, []any{header(subject), richText(paragraph(bold(outcome))), factsBlock(facts)}
}

// resultFacts describes a result waiting for (or given) its owner's approval.
func resultFacts(t task.Task) [][2]string {
	r := t.Result
	facts := [][2]string{
		{"Task", t.ID + " (project " + t.Project + ")"},
		{"Work", clip(t.Packet.Task, 200)},
		{"Type", t.Packet.DeliverableType},
		{"Assignee", t.Assignee},
		{"Requester", t.Requester},
	}
	if r != nil {
		facts = append(facts, [2]string{"Provenance", r.Provenance})
	}
	return facts
}

func evidenceLines(t task.Task) (text string, links []string) {
	if t.Result == nil {
		return "", nil
	}
	var b strings.Builder
	for _, e := range t.Result.Evidence {
		fmt.Fprintf(&b, "- %s: %s", e.Kind, e.Summary)
		if e.URL != "" {
			fmt.Fprintf(&b, " <%s>", e.URL)
			links = append(links, e.URL)
		}
		if e.Content != "" {
			fmt.Fprintf(&b, "\n    %s", strings.ReplaceAll(clip(e.Content, evidenceTextMax), "\n", "\n    "))
		}
		b.WriteString("\n")
	}
	return b.String(), links
}

// approvalRequestMessage asks the owner to approve a result before its task
// completes; token and url as for stepRequestMessage.
func approvalRequestMessage(t task.Task, token, url string, expires time.Time) message {
	subject := fmt.Sprintf("Approve the result of task %s by %s? (%s)", t.ID, t.Assignee, t.Packet.DeliverableType)
	summary := ""
	if t.Result != nil {
		summary = t.Result.Summary
	}
	evidence, evLinks := evidenceLines(t)
	var b strings.Builder
	fmt.Fprintf(&b, "%s returned a result that %s accepted; it is completed only when you approve it.\n\n", t.Assignee, t.Requester)
	b.WriteString(factLines(resultFacts(t)))
	fmt.Fprintf(&b, "\nSummary:\n%s\n\nEvidence:\n%s\n", summary, orDash(evidence))
	fmt.Fprintf(&b, "Approve or refuse here (opening the link changes nothing; only the button on the page decides):\n%s\n\n", url)
	fmt.Fprintf(&b, "The link works until %s, and the result can be decided once.\n", stamp(expires))

	blocks := []any{
		header(subject),
		richText(paragraph(bold(t.Assignee), literal(fmt.Sprintf(" returned a result that %s accepted; it is completed only when you approve it.", t.Requester)))),
		factsBlock(resultFacts(t)),
		labelled("Summary", orDash(summary)),
		labelled("Evidence", orDash(evidence)),
		decideActions(token, url, false),
		contextBlock(decideNote(ownerOf(t.Assignee), expires)),
	}
	return message{subject: subject, text: b.String(), blocks: blocks, links: append([]string{url}, evLinks...)}
}

// resultSettledMessage tells the owner what became of the result they were asked about.
func resultSettledMessage(t task.Task, by string, at time.Time) message {
	var outcome, verb string
	switch t.State {
	case task.Completed:
		verb = "Approved"
		outcome = fmt.Sprintf("Approved by %s at %s: task %s is completed (provenance owner_approved).", by, stamp(at), t.ID)
	case task.Working:
		verb = "Refused"
		outcome = fmt.Sprintf("Refused by %s at %s: task %s is back to working.", by, stamp(at), t.ID)
	default:
		verb = "Decided"
		outcome = fmt.Sprintf("Decided by %s at %s: task %s is %s.", by, stamp(at), t.ID, t.State)
	}
	subject := fmt.Sprintf("%s result of task %s by %s", verb, t.ID, t.Assignee)
	evidence, evLinks := evidenceLines(t)
	b, blocks := settledOpening(subject, outcome, resultFacts(t))
	blocks = append(blocks, labelled("Evidence", orDash(evidence)))
	if evLinks == nil {
		evLinks = []string{}
	}
	return message{subject: subject, text: b.String(), notice: outcome, blocks: blocks, links: evLinks}
}

func article(kind string) string {
	switch {
	case kind == "":
		return "a"
	case strings.ContainsRune("aeiou", rune(kind[0])):
		return "an " + kind
	}
	return "a " + kind
}
