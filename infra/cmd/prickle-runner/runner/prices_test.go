package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParsePrices(t *testing.T) {
	base := "prickle_url: http://x\nprojects: {a: {dir: /w}}\n"
	tests := []struct {
		name, yaml, err string
		want            Prices
	}{
		{name: "none", yaml: base},
		{name: "a model and a default", yaml: base + "model_prices:\n  gpt-5.1-codex: {input_usd_per_mtok: 1.25, output_usd_per_mtok: 10}\n  default: {input_usd_per_mtok: 3}\n",
			want: Prices{"gpt-5.1-codex": {InputUSDPerMTok: 1.25, OutputUSDPerMTok: 10}, "default": {InputUSDPerMTok: 3}}},
		{name: "free", yaml: base + "model_prices: {local-llama: {input_usd_per_mtok: 0, output_usd_per_mtok: 0}}\n",
			want: Prices{"local-llama": {}}},
		{name: "negative", yaml: base + "model_prices: {m: {input_usd_per_mtok: -1}}\n", err: "model_prices.m.input_usd_per_mtok -1 must be a number from 0 to 10000"},
		{name: "over the bound", yaml: base + "model_prices: {m: {output_usd_per_mtok: 10001}}\n", err: "model_prices.m.output_usd_per_mtok 10001 must be"},
		{name: "not finite", yaml: base + "model_prices: {m: {input_usd_per_mtok: .nan}}\n", err: "model_prices.m.input_usd_per_mtok NaN"},
		{name: "infinite", yaml: base + "model_prices: {m: {output_usd_per_mtok: .inf}}\n", err: "model_prices.m.output_usd_per_mtok +Inf"},
		{name: "empty name", yaml: base + "model_prices: {'': {input_usd_per_mtok: 1}}\n", err: "model_prices: a model's name is empty"},
		{name: "unknown field", yaml: base + "model_prices: {m: {input_per_token: 1}}\n", err: "input_per_token"},
		{name: "not a number", yaml: base + "model_prices: {m: {input_usd_per_mtok: cheap}}\n", err: "cheap"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := ParseConfig([]byte(tt.yaml))
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(c.Prices) != len(tt.want) {
				t.Fatalf("prices = %+v, want %+v", c.Prices, tt.want)
			}
			for m, p := range tt.want {
				if c.Prices[m] != p {
					t.Errorf("prices[%s] = %+v, want %+v", m, c.Prices[m], p)
				}
			}
		})
	}
}

func TestPriceAUsage(t *testing.T) {
	table := Prices{
		"gpt-5.1-codex": {InputUSDPerMTok: 1.25, OutputUSDPerMTok: 10},
		"qwen3-coder":   {InputUSDPerMTok: 0.3, OutputUSDPerMTok: 1.2},
	}
	withDefault := Prices{"gpt-5.1-codex": table["gpt-5.1-codex"], DefaultPriceKey: {InputUSDPerMTok: 2, OutputUSDPerMTok: 8}}
	tests := []struct {
		name          string
		prices        Prices
		in            *Usage
		wantCost      float64
		entry, reason string
	}{
		{name: "priced", prices: table, in: &Usage{InputTokens: 400_000, OutputTokens: 20_000, Model: "gpt-5.1-codex"},
			wantCost: 0.7, entry: "gpt-5.1-codex"},
		{name: "rounded to the micro-USD", prices: table, in: &Usage{InputTokens: 1234, OutputTokens: 5, Model: "qwen3-coder"},
			wantCost: 0.000376, entry: "qwen3-coder"}, // 370.2 + 6 micro-USD
		{name: "a fraction of a micro-USD rounds to the nearest", prices: table, in: &Usage{InputTokens: 1, OutputTokens: 0, Model: "gpt-5.1-codex"},
			wantCost: 0.000001, entry: "gpt-5.1-codex"},
		{name: "the CLI's cost wins", prices: table, in: &Usage{CostUSD: 0.0123, InputTokens: 400_000, Model: "gpt-5.1-codex"},
			wantCost: 0.0123},
		{name: "unknown model: 0 and a note", prices: table, in: &Usage{InputTokens: 1000, Model: "o3"},
			reason: `model "o3" has no entry in model_prices`},
		{name: "no model: 0 and a note", prices: table, in: &Usage{InputTokens: 1000},
			reason: `model "" has no entry`},
		{name: "unknown model takes the default", prices: withDefault, in: &Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000, Model: "o3"},
			wantCost: 10, entry: DefaultPriceKey},
		{name: "no model takes the default", prices: withDefault, in: &Usage{OutputTokens: 1000},
			wantCost: 0.008, entry: DefaultPriceKey},
		{name: "no tokens: nothing to price", prices: withDefault, in: &Usage{Model: "gpt-5.1-codex"}},
		{name: "no table: 0 and no note", in: &Usage{InputTokens: 1000, Model: "gpt-5.1-codex"}},
		{name: "no usage", prices: table},
		{name: "capped at what a run may report", prices: Prices{"big": {InputUSDPerMTok: 10_000}}, in: &Usage{InputTokens: 200_000_000, Model: "big"},
			wantCost: 1000, entry: "big", reason: "over 1000 USD"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before Usage
			if tt.in != nil {
				before = *tt.in
			}
			entry, reason := tt.prices.price(tt.in)
			if entry != tt.entry {
				t.Errorf("entry = %q, want %q", entry, tt.entry)
			}
			if (tt.reason == "") != (reason == "") || !strings.Contains(reason, tt.reason) {
				t.Errorf("note = %q, want one with %q", reason, tt.reason)
			}
			if tt.in == nil {
				return
			}
			if tt.in.CostUSD != tt.wantCost {
				t.Errorf("cost = %v, want %v", tt.in.CostUSD, tt.wantCost)
			}
			after := *tt.in
			after.CostUSD = before.CostUSD
			if after != before {
				t.Errorf("pricing changed more than the cost: %+v, was %+v", after, before)
			}
		})
	}
}

// A Codex run's tokens reach Prickle with the price table's cost; a Claude
// Code run keeps the cost Claude Code reported.
func TestARunsCostFromThePriceTable(t *testing.T) {
	r, tasks, dir := claudeRunner(t)
	r.Config.Prices = Prices{"gpt-5.1-codex": {InputUSDPerMTok: 1.25, OutputUSDPerMTok: 10}, "claude-opus-5-5": {InputUSDPerMTok: 1000}}
	fakeCodexRun := filepath.Join(dir, "fake-codex-run")
	script := "#!/bin/sh\necho '{\"msg\":\"turn end\"}'\n" +
		`echo '{"level":"INFO","msg":"` + CodexUsageMsg + `","usage":{"cost_usd":0,"input_tokens":400000,"output_tokens":20000,"turns":2,"duration_ms":1500,"model":"gpt-5.1-codex"}}'` + "\n"
	if err := os.WriteFile(fakeCodexRun, []byte(script), 0o700); err != nil {
		t.Fatal(err)
	}
	claude := r.Config.Projects["website-v2"]
	r.Config.Projects["website-v2"] = Project{Dir: dir, Template: TemplateCodex, Prompt: DefaultPrompt, ResumePrompt: DefaultResumePrompt}
	r.Self = fakeCodexRun
	r.Offer("run_x", payload("t_codex", "run_x"), "webhook", nil)
	r.Wait()

	r.Config.Projects["website-v2"] = claude
	answer(t, dir, `{"type":"result","stop_reason":"end_turn","session_id":"SID","total_cost_usd":0.5,"num_turns":1,"usage":{"input_tokens":100,"output_tokens":10},"modelUsage":{"claude-opus-5-5":{"costUSD":0.5}}}`)
	r.Offer("run_c", payload("t_claude", "run_c"), "webhook", nil)
	r.Wait()

	tasks.mu.Lock()
	defer tasks.mu.Unlock()
	want := Usage{CostUSD: 0.7, InputTokens: 400000, OutputTokens: 20000, Turns: 2, DurationMS: 1500, Model: "gpt-5.1-codex"}
	if u := tasks.usage["prk_r_run_x"]; u == nil || *u != want {
		t.Errorf("codex run reported %+v, want %+v", u, want)
	}
	if u := tasks.usage["prk_r_run_c"]; u == nil || u.CostUSD != 0.5 {
		t.Errorf("claude run reported %+v, want Claude Code's cost 0.5", u)
	}
}

// The example config's model_prices, commented out there, parse as shown.
func TestExamplePricesParse(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "runner.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	var block []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "# model_prices:") || (len(block) > 0 && strings.HasPrefix(l, "#   ")) {
			block = append(block, strings.TrimPrefix(l, "# "))
		} else if len(block) > 0 {
			break
		}
	}
	c, err := ParseConfig([]byte("prickle_url: http://x\nprojects: {a: {dir: /w}}\n" + strings.Join(block, "\n") + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Prices) != 2 || c.Prices[DefaultPriceKey].OutputUSDPerMTok != 15 {
		t.Errorf("the example's model_prices read %+v", c.Prices)
	}
}
