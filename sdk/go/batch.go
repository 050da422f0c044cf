package kubeloop

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"
)

// Batches (docs/contract.md, "Batches"): several ReconcileRequests in one HTTP request, as a plain JSON
// ReconcileBatchRequest or a CloudEvents batch, each item accepted, called and checked on its own, a
// failing item answered with its own error entry and the others with their replies.

const (
	// BatchMaxHeader on a reply says the function answers batches of up to that many items.
	BatchMaxHeader = "X-Kubeloop-Batch-Max"
	// ErrorEventType is the type of a batch reply event carrying one item's error.
	ErrorEventType = "dev.kubeloop.reconcile.error.v1"
	batchMediaType = "application/cloudevents-batch+json"
	// MaxBatchItems is the most items a batch may carry.
	MaxBatchItems = 64
)

type batchItem struct {
	id    string
	value any
}

func batchItems(format string, value any) ([]batchItem, *callError) {
	code := "InvalidCloudEvent"
	if format == "json" {
		code = "InvalidRequest"
	}
	fail := func(message string) *callError { return &callError{400, code, message} }
	var list []any
	if format == "json" {
		object, _ := value.(map[string]any)
		if version, present := object["apiVersion"]; present && version != APIVersion {
			return nil, fail(fmt.Sprintf("batch apiVersion %q is not supported; want %s", fmt.Sprint(version), APIVersion))
		}
		items, ok := object["items"].([]any)
		if !ok {
			return nil, fail("a ReconcileBatchRequest needs items: a list of ReconcileRequests")
		}
		list = items
	} else {
		items, ok := value.([]any)
		if !ok {
			return nil, fail("a CloudEvents batch must be a JSON array of structured-mode events")
		}
		list = items
	}
	if len(list) == 0 {
		return nil, fail("the batch has no items")
	}
	if len(list) > MaxBatchItems {
		return nil, fail(fmt.Sprintf("the batch has %d items; at most %d are accepted", len(list), MaxBatchItems))
	}
	idField, idName := "id", "CloudEvent id"
	if format == "json" {
		idField, idName = "reconcileId", "reconcileId"
	}
	seen := map[string]bool{}
	out := make([]batchItem, 0, len(list))
	for index, entry := range list {
		object, _ := entry.(map[string]any)
		id, _ := object[idField].(string)
		if id == "" {
			return nil, fail(fmt.Sprintf("batch item %d has no %s; every item of a batch needs one", index, idName))
		}
		if seen[id] {
			return nil, fail(fmt.Sprintf("batch items %q appear twice; ids must be unique in a batch", id))
		}
		seen[id] = true
		out = append(out, batchItem{id, entry})
	}
	return out, nil
}

// answerItem is one item's reply or its error, never both.
func (f Function) answerItem(format string, item batchItem) (map[string]any, *callError) {
	value := item.value
	if format == "cloudevents" {
		// The item is checked exactly as a structured-mode event on its own would be.
		raw, _ := json.Marshal(value)
		var err *callError
		if value, err = eventData(http.Header{}, raw, "structured"); err != nil {
			return nil, err
		}
	}
	request, err := f.accept(value)
	if err != nil {
		return nil, err
	}
	reply, callErr := f.Call(request)
	if callErr != nil {
		if e, ok := callErr.(*callError); ok {
			return nil, e
		}
		return nil, &callError{500, "FunctionError", callErr.Error()}
	}
	return reply, nil
}

func (f Function) handleBatch(format string, value any) (Reply, *callError) {
	items, err := batchItems(format, value)
	if err != nil {
		return Reply{}, err
	}
	now := time.Now().UTC().Format(time.RFC3339)
	out := make([]map[string]any, 0, len(items))
	for _, item := range items {
		reply, itemErr := f.answerItem(format, item)
		var errorBody map[string]any
		if itemErr != nil {
			errorBody = map[string]any{"statusCode": itemErr.status, "code": itemErr.code, "message": itemErr.message}
		}
		switch {
		case format == "json" && itemErr != nil:
			out = append(out, map[string]any{"reconcileId": item.id, "error": errorBody})
		case format == "json":
			out = append(out, map[string]any{"reconcileId": item.id, "response": reply})
		default:
			event := map[string]any{"specversion": "1.0", "id": item.id, "source": "/kubeloop/functions/" + f.Name, "type": ResponseEventType, "time": now, "datacontenttype": "application/json", "data": reply}
			if itemErr != nil {
				errorBody["reconcileId"] = item.id
				event["type"], event["data"] = ErrorEventType, errorBody
			}
			out = append(out, event)
		}
	}
	if format == "json" {
		return jsonReply(200, map[string]any{"apiVersion": APIVersion, "kind": "ReconcileBatchResponse", "items": out}, nil), nil
	}
	reply := jsonReply(200, out, nil)
	reply.Header.Set("Content-Type", batchMediaType+"; charset=utf-8")
	return reply, nil
}
