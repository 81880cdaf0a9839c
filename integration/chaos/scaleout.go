package chaos

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	enumspb "go.temporal.io/api/enums/v1"
)

// WorkerShares counts, over every workflow's history, the workflow tasks
// each worker process completed and the activities it ran, by the worker's
// number (1 for the first). An identity that is none of the workers' counts
// under 0.
func (s *Stack) WorkerShares(ctx context.Context) (tasks, activities map[int]int, err error) {
	c, err := s.temporalClient(ctx)
	if err != nil {
		return nil, nil, err
	}
	defer c.Close()
	// The SDK's default identity is the worker's pid@host.
	byPID := map[string]int{}
	for i, w := range s.workers {
		w.mu.Lock()
		if w.cmd != nil {
			byPID[strconv.Itoa(w.cmd.Process.Pid)] = i + 1
		}
		w.mu.Unlock()
	}
	who := func(identity string) int {
		pid, _, _ := strings.Cut(identity, "@")
		return byPID[pid]
	}
	tasks, activities = map[int]int{}, map[int]int{}
	var token []byte
	for {
		page, err := c.ListWorkflow(ctx, listRequest(token))
		if err != nil {
			return nil, nil, fmt.Errorf("list workflows: %w", err)
		}
		for _, e := range page.Executions {
			it := c.GetWorkflowHistory(ctx, e.Execution.WorkflowId, e.Execution.RunId, false, enumspb.HISTORY_EVENT_FILTER_TYPE_ALL_EVENT)
			for it.HasNext() {
				ev, err := it.Next()
				if err != nil {
					return nil, nil, fmt.Errorf("history of %s: %w", e.Execution.WorkflowId, err)
				}
				if a := ev.GetWorkflowTaskCompletedEventAttributes(); a != nil {
					tasks[who(a.Identity)]++
				}
				if a := ev.GetActivityTaskStartedEventAttributes(); a != nil {
					activities[who(a.Identity)]++
				}
			}
		}
		if token = page.NextPageToken; len(token) == 0 {
			return tasks, activities, nil
		}
	}
}

// KillWorkerN ends worker n (1 for the first) with SIGKILL and leaves it
// down.
func (s *Stack) KillWorkerN(n int) { s.workers[n-1].kill() }
