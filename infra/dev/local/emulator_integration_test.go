//go:build integration

package main

import (
	"bufio"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/useprickle/prickle/shared/aws/store"
)

// TestRequestsAreServedOnce is the regression test of requests served
// twice (werkzeug's server under keep-alive, then waitress): many fresh
// writes from many goroutines over the stack's own client, each answered as
// new (no "already exists", no failed condition) and each in the emulator's
// request log exactly once; each write is then sent again, as another call
// would, and refused by its condition. The emulator's log names every request
// the SDK sent again (an answer it did not get): there must be none. (This
// load did not make waitress lose an answer; shared/owners/web's integration tests
// did, 30 to 50 times a run.)
func TestRequestsAreServedOnce(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	t.Chdir(root)
	dir := t.TempDir()
	ctx := context.Background()
	emu, err := startEmulator(ctx, filepath.Join(dir, "dynamodb.log"), filepath.Join(dir, "emulator.log"))
	if err != nil {
		t.Fatal(err)
	}
	defer emu.stop()
	client := store.NewFunctionClient(emu.endpoint)

	const tables, writers, perWriter = 12, 24, 25
	var wg sync.WaitGroup
	errs := make(chan error, tables+writers*perWriter)
	for i := range tables {
		wg.Go(func() {
			_, err := client.CreateTable(ctx, &dynamodb.CreateTableInput{
				TableName:            aws.String(fmt.Sprintf("once-%02d", i)),
				BillingMode:          types.BillingModePayPerRequest,
				KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
			})
			if err != nil {
				errs <- fmt.Errorf("create table once-%02d: %w", i, err)
			}
		})
	}
	wg.Wait()
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				key := fmt.Sprintf("key-%02d-%03d", w, i)
				put := &dynamodb.PutItemInput{
					TableName:           aws.String(fmt.Sprintf("once-%02d", (w+i)%tables)),
					Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: key}},
					ConditionExpression: aws.String("attribute_not_exists(pk)"),
				}
				if _, err := client.PutItem(ctx, put); err != nil {
					errs <- fmt.Errorf("put %s: %w", key, err)
				}
				var failed *types.ConditionalCheckFailedException
				if _, err := client.PutItem(ctx, put); !errors.As(err, &failed) {
					errs <- fmt.Errorf("put %s again: err = %v, want its condition failed", key, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	emulatorLog, err := os.ReadFile(filepath.Join(dir, "emulator.log"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(emulatorLog), "a retried request"); n > 0 {
		t.Errorf("the emulator saw %d retried requests (answers the SDK did not get):\n%s", n, emulatorLog)
	}

	served := loggedWrites(t, filepath.Join(dir, "dynamodb.log"))
	for i := range tables {
		if n := served[fmt.Sprintf("CreateTable once-%02d", i)]; n != 1 {
			t.Errorf("CreateTable once-%02d served %d times", i, n)
		}
	}
	for w := range writers {
		for i := range perWriter {
			if n := served[fmt.Sprintf("PutItem key-%02d-%03d", w, i)]; n != 2 {
				t.Errorf("PutItem key-%02d-%03d served %d times, want 2 (the write, then the refused one)", w, i, n)
			}
		}
	}
}

// loggedWrites counts the emulator's logged requests by action and table
// name or item key ("CreateTable once-01", "PutItem key-03-007").
func loggedWrites(t *testing.T, path string) map[string]int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	counts := map[string]int{}
	lines := bufio.NewScanner(f)
	lines.Buffer(nil, 1<<24)
	for lines.Scan() {
		var entry struct {
			Headers     map[string]string `json:"headers"`
			Body        string            `json:"body"`
			BodyEncoded bool              `json:"body_encoded"`
		}
		if err := json.Unmarshal(lines.Bytes(), &entry); err != nil {
			t.Fatalf("log line: %v", err)
		}
		body := []byte(entry.Body)
		if entry.BodyEncoded {
			if body, err = base64.StdEncoding.DecodeString(entry.Body); err != nil {
				t.Fatalf("log body: %v", err)
			}
		}
		var req struct {
			TableName string
			Item      struct{ PK struct{ S string } }
		}
		_ = json.Unmarshal(body, &req)
		target := ""
		for k, v := range entry.Headers {
			if strings.EqualFold(k, "X-Amz-Target") {
				target = v
			}
		}
		switch target {
		case "DynamoDB_20120810.CreateTable":
			counts["CreateTable "+req.TableName]++
		case "DynamoDB_20120810.PutItem":
			counts["PutItem "+req.Item.PK.S]++
		}
	}
	if err := lines.Err(); err != nil {
		t.Fatal(err)
	}
	return counts
}
