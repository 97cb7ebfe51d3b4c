package gpu

import "testing"

func TestLayersFor(t *testing.T) {
	const gib = 1 << 30
	gpu := func(free uint64) []Device { return []Device{{Kind: KindGPU, FreeBytes: free}} }
	cases := []struct {
		name       string
		configured int
		gpus       []Device
		model      uint64
		layers     int
		reserve    uint64
		want       int
	}{
		{"configured wins", 12, gpu(80 * gib), 16 * gib, 62, gib, 12},
		{"cpu only configured", 0, gpu(80 * gib), 16 * gib, 62, gib, 0},
		{"configured but no gpu", 30, nil, 16 * gib, 62, gib, 0},
		{"auto without gpu", -1, nil, 16 * gib, 62, gib, 0},
		{"auto fits whole model", -1, gpu(80 * gib), 16 * gib, 62, 2 * gib, 63},
		{"auto partial", -1, gpu(10 * gib), 16 * gib, 64, gib, 32},
		{"auto two gpus add up", -1, []Device{{Kind: KindGPU, FreeBytes: 10 * gib}, {Kind: KindGPU, FreeBytes: 10 * gib}}, 16 * gib, 64, gib, 65},
		{"auto context does not fit", -1, gpu(gib), 16 * gib, 64, 2 * gib, 0},
	}
	for _, tc := range cases {
		if got, why := LayersFor(tc.configured, tc.gpus, tc.model, tc.layers, tc.reserve); got != tc.want {
			t.Errorf("%s: got %d (%s), want %d", tc.name, got, why, tc.want)
		}
	}
}

func TestDevicesListsTheCPU(t *testing.T) {
	Init("")
	devs := Devices()
	var cpu bool
	for _, d := range devs {
		if d.Kind == KindCPU {
			cpu = true
			if d.Name == "" {
				t.Errorf("CPU device without a name: %+v", d)
			}
		}
	}
	if !cpu {
		t.Fatalf("ggml registered no CPU device: %+v", devs)
	}
}
