package worker

import (
	"testing"
	"time"

	sdkworker "go.temporal.io/sdk/worker"
)

func TestOptions(t *testing.T) {
	tests := []struct {
		name        string
		tune        []func(*sdkworker.Options)
		wantPollers int
		wantSlots   int
	}{
		{name: "defaults", wantPollers: 16, wantSlots: 200},
		{name: "deployment tuning wins", tune: []func(*sdkworker.Options){func(o *sdkworker.Options) {
			o.MaxConcurrentWorkflowTaskPollers = 4
			o.MaxConcurrentWorkflowTaskExecutionSize = 50
		}}, wantPollers: 4, wantSlots: 50},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := Options(tt.tune...)
			if o.MaxConcurrentWorkflowTaskPollers != tt.wantPollers || o.MaxConcurrentWorkflowTaskExecutionSize != tt.wantSlots {
				t.Errorf("pollers %d, workflow task slots %d; want %d and %d",
					o.MaxConcurrentWorkflowTaskPollers, o.MaxConcurrentWorkflowTaskExecutionSize, tt.wantPollers, tt.wantSlots)
			}
			if o.StickyScheduleToStartTimeout != 30*time.Second || o.MaxConcurrentLocalActivityExecutionSize != 200 {
				t.Errorf("sticky timeout %v, local activity slots %d; want 30s and 200",
					o.StickyScheduleToStartTimeout, o.MaxConcurrentLocalActivityExecutionSize)
			}
		})
	}
}
