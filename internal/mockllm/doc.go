// Package mockllm is a scripted model server for testing dtree against the
// real agent CLIs offline. It speaks the four wire protocols those CLIs
// call — Anthropic Messages, OpenAI Responses, OpenAI Chat Completions and
// Gemini generateContent, each streamed and not — on 127.0.0.1 only, and
// answers from an ordered list of rules that match on the prompt, the
// turn and the tool results a request carries: a reply with chosen usage
// figures, text and tool calls in the provider's own shape, an HTTP error
// in the provider's own shape, or a hang until the client goes away. It
// records every request (the API, the path, the model, the prompt as
// received, its turn and tool results, the raw body) and the usage it sent, so a test can check that a prompt arrived byte for byte and that
// dtree recorded the usage the server reported.
//
// cmd/mockllm runs one from a YAML script for manual checks
// (readme/dev.md).
package mockllm
