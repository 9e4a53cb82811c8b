package runner

import (
	"fmt"
	"math"
	"sort"

	"github.com/useprickle/prickle/shared/domain/modelspend"
	"github.com/useprickle/prickle/shared/domain/wakeup"
)

// A run's cost where its CLI reports none (Codex, Qwen Code, Gemini CLI,
// Copilot CLI; opencode without prices of its model): the operator's price table (model_prices in the config),
// in USD per million tokens, applied to the run's tokens and its model as
// the runner reports them. A cost the CLI reported (Claude Code's, opencode's) stays as
// it is. A model the table does not name takes its "default" entry; with
// none, the run counts 0 USD and the runner says so in its log.

// DefaultPriceKey is the model_prices entry for a model the table does not
// name, or a run whose CLI named no model.
const DefaultPriceKey = "default"

// MaxPriceUSDPerMTok bounds each price of the table: far above any model's
// list price, so a number beyond it is a mistake (a price per token, say).
const MaxPriceUSDPerMTok = 10_000

// ModelPrice is what a model's tokens cost, in USD per million tokens.
type ModelPrice struct {
	InputUSDPerMTok  float64 `yaml:"input_usd_per_mtok"`
	OutputUSDPerMTok float64 `yaml:"output_usd_per_mtok"`
}

// Prices maps a model's name, as the run's usage names it, to its price.
type Prices map[string]ModelPrice

// check refuses a price that is negative, not finite or over
// MaxPriceUSDPerMTok, naming its key.
func (p Prices) check() error {
	names := make([]string, 0, len(p))
	for name := range p {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		if name == "" {
			return fmt.Errorf("model_prices: a model's name is empty (use %q for the models not named)", DefaultPriceKey)
		}
		for _, f := range []struct {
			key string
			v   float64
		}{{"input_usd_per_mtok", p[name].InputUSDPerMTok}, {"output_usd_per_mtok", p[name].OutputUSDPerMTok}} {
			if math.IsNaN(f.v) || math.IsInf(f.v, 0) || f.v < 0 || f.v > MaxPriceUSDPerMTok {
				return fmt.Errorf("model_prices.%s.%s %v must be a number from 0 to %d (USD per million tokens)", name, f.key, f.v, MaxPriceUSDPerMTok)
			}
		}
	}
	return nil
}

// price sets u's cost from the table when u has tokens and no cost of its
// CLI's. It says which entry priced it, or, when none could, why (the run
// then counts 0 USD); both empty when there was nothing to price.
func (p Prices) price(u *Usage) (entry, problem string) {
	if u == nil || u.CostUSD > 0 || len(p) == 0 || (u.InputTokens <= 0 && u.OutputTokens <= 0) {
		return "", ""
	}
	entry = u.Model
	mp, ok := p[entry]
	if !ok || entry == "" {
		entry = DefaultPriceKey
		if mp, ok = p[entry]; !ok {
			return "", fmt.Sprintf("run cost not known: model %q has no entry in model_prices, nor is there a %q one; the run counts 0 USD", u.Model, DefaultPriceKey)
		}
	}
	// Tokens × USD per million tokens is micro-USD: round to the micro-USD
	// Prickle counts in.
	micros := math.Round(float64(max(u.InputTokens, 0))*mp.InputUSDPerMTok + float64(max(u.OutputTokens, 0))*mp.OutputUSDPerMTok)
	if micros > modelspend.MaxRunCostUSD*1e6 {
		u.CostUSD = modelspend.MaxRunCostUSD
		return entry, fmt.Sprintf("run cost from model_prices[%s] is over %d USD, the most a run may report; it counts %d USD",
			entry, modelspend.MaxRunCostUSD, modelspend.MaxRunCostUSD)
	}
	u.CostUSD = micros / 1e6
	return entry, ""
}

// priceUsage prices a run's usage whose CLI reported no cost (see Prices),
// and says so in the runner's output.
func (r *Runner) priceUsage(w wakeup.Payload, u *Usage) *Usage {
	entry, problem := r.Config.Prices.price(u)
	switch {
	case problem != "":
		r.Out.Warn(problem, "task", w.TaskID, "run", w.RunID, "model", u.Model)
	case entry != "":
		r.Out.Info("run cost from model_prices", "task", w.TaskID, "run", w.RunID, "model", u.Model, "price", entry, "cost_usd", u.CostUSD)
	}
	return u
}
