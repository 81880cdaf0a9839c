package chaos

import "go.temporal.io/api/workflowservice/v1"

// listRequest is one page of every workflow in the default namespace.
func listRequest(token []byte) *workflowservice.ListWorkflowExecutionsRequest {
	return &workflowservice.ListWorkflowExecutionsRequest{Namespace: "default", PageSize: 500, NextPageToken: token}
}
