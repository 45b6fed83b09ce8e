// Package response reads what an agent CLI printed and finds the JSON answer
// dtree asked for (readme/run.md#3-each-node).
//
// Agents are told to end their reply with one JSON object, but real replies
// wrap it in markdown fences, surround it with prose, colour it with terminal
// escape sequences, echo the example from the prompt, or get a type wrong
// ("completed": "true"). The package is built to be forgiving in the places
// where the agent's intent is still clear, and to fail with an [*Error] whose
// Reason can be sent back to the agent as a retry critique when it is not.
//
// The pieces, in the order the runner uses them:
//
//   - [StripANSI] removes terminal escape sequences.
//   - [FindObjects] scans the text once, in linear time, for every balanced
//     top-level JSON object (see its doc for the exact rule).
//   - [ParseProcess], [ParseDecision] and [ParseValidation] pick the last
//     object that carries the response's key and decode it leniently into
//     the types in package types.
//   - [MatchLabel] maps a decision's free-text answer to one of the node's
//     outgoing edge labels.
package response
