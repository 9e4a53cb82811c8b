package web

import (
	"net/http"
	"slices"
	"time"

	"github.com/useprickle/prickle/shared/auth/session"
	"github.com/useprickle/prickle/shared/domain/task"
	"github.com/useprickle/prickle/shared/team"
)

type boardView struct {
	chrome
	Project   team.Project
	Agents    []string
	Types     []string
	Agent     string // filter
	Type      string // filter
	Columns   []boardColumn
	Total     int
	Truncated bool
	// New is the form that creates a task; Notice says why the last one did not.
	New         newTaskForm
	Notice      string
	NoticeClass string
}

// newTaskForm is the board's "New task" form: the owner hands a task to an
// agent of the project, its requester one of the owner's own agents.
type newTaskForm struct {
	Requesters                                                           []string // the owner's agents in the project
	Assignees                                                            []string // every agent of the project
	Requester, Assignee, Task, Type, Criteria, Context, Files, DependsOn string
	Open                                                                 bool // shown open: the form came back with what the owner sent
}

type boardColumn struct {
	ID, Name string
	Cards    []card
}

type card struct {
	ID, Work, Type, State, Assignee, Requester, WaitingOn, Age, Created string
}

// DeliverableTypes are the packet's deliverable types, the seed enum.
var DeliverableTypes = []string{"code", "doc", "answer", "screenshots", "reviewed_pr", "design", "data", "other"}

// columns are the board's columns by state.
var columns = []struct {
	id, name string
	states   []task.State
}{
	{"requested", "Requested", []task.State{task.Requested}},
	{"routed", "Routed", []task.State{task.Routed}},
	{"working", "Accepted · working · waiting", []task.State{task.Accepted, task.Working, task.Waiting}},
	{"verifying", "Verifying · approval", []task.State{task.Verifying, task.Approval}},
	{"done", "Done", []task.State{task.Completed, task.Rejected, task.Cancelled}},
}

// boardPages bounds how many pages of 100 tasks one board reads.
const boardPages = 5

// board is GET /p/{project}/tasks?agent=&type=.
func (h *Handler) board(w http.ResponseWriter, r *http.Request) {
	projectView(h, w, r, "board.html", h.boardViewOf)
}

func (h *Handler) boardViewOf(r *http.Request, me session.Session, p team.Project, agents []team.Agent) (*boardView, error) {
	q := r.URL.Query()
	v := &boardView{chrome: chrome{Title: "Tasks · " + p.Name, Me: me.Owner, CSRF: h.keys.FormToken(me)},
		Project: p, Types: DeliverableTypes, Agent: q.Get("agent"), Type: q.Get("type")}
	for _, a := range agents {
		v.Agents = append(v.Agents, a.ID)
		if ownerOf(a.ID) == me.Owner {
			v.New.Requesters = append(v.New.Requesters, a.ID)
		}
	}
	v.New.Assignees = v.Agents
	if !slices.Contains(v.Agents, v.Agent) {
		v.Agent = ""
	}
	if !slices.Contains(DeliverableTypes, v.Type) {
		v.Type = ""
	}
	query := team.TaskQuery{Project: p.Slug, Limit: 100}
	if v.Agent != "" {
		query.Involving, query.Role = v.Agent, "any"
	}
	var tasks []task.Task
	for i := 0; ; i++ {
		pg, err := h.cfg.Store.ListTasks(r.Context(), query)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, pg.Tasks...)
		if pg.NextCursor == "" {
			break
		}
		if i+1 == boardPages {
			v.Truncated = true
			break
		}
		query.Cursor = pg.NextCursor
	}
	now := h.now()
	col := map[task.State]int{}
	for i, c := range columns {
		v.Columns = append(v.Columns, boardColumn{ID: c.id, Name: c.name})
		for _, s := range c.states {
			col[s] = i
		}
	}
	for _, t := range tasks {
		if v.Type != "" && t.Packet.DeliverableType != v.Type {
			continue
		}
		c := card{ID: t.ID, Work: t.Packet.Task, Type: t.Packet.DeliverableType, State: string(t.State),
			Assignee: t.Assignee, Requester: t.Requester, Age: ago(now, t.CreatedAt), Created: t.CreatedAt.UTC().Format(time.RFC3339)}
		if t.WaitingOn != nil {
			c.WaitingOn = *t.WaitingOn
		}
		i := col[t.State]
		v.Columns[i].Cards = append(v.Columns[i].Cards, c)
		v.Total++
	}
	return v, nil
}
