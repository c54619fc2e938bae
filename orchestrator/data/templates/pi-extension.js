// orchestrator's pi extension, written by `orch install @ORCH_AGENT@` (orch:managed). Commit it: it names no path of this
// machine. pi loads every .pi/extensions/*.js of a TRUSTED project started in its root (`orch install pi --trust`,
// `orch doctor`); this one sends each tool call to orchestrator before it runs (tool_call) and after (tool_result),
// and BLOCKS it ({block: true, reason}: pi hands the model the reason instead of running the tool) when orchestrator
// refuses it, or when orchestrator cannot be reached at all, or on any error of its own: fail closed, never "allow"
// on its own. The calls a codemode script makes (tools.<name>(args)) come through tool_call one by one, with the
// script's call as parentToolCallId: each is governed like a direct call.
//
// One round trip per hook: the workspace daemon's socket (.orchestration/run/orch.sock, about a millisecond); when no
// daemon answers, the committed launcher .orchestration/bin/orch-hook, which finds this machine's interpreter,
// evaluates the call and starts a daemon for the next one (docs/adapters.md, "pi"). Nothing here throws while the
// extension loads: pi reports an extension that fails to load and goes on without it, ungoverned.
import { spawn } from "node:child_process"
import { createConnection } from "node:net"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

// @orch-include hook-wire.js

// what orchestrator reads of a tool's result (never the tool's text output)
function resultOf(event) {
  const result = { isError: event.isError === true }
  const structured = event.structuredContent
  if (structured && typeof structured === "object" && typeof structured.exit_code === "number") {
    result.exit_code = structured.exit_code
  }
  return result
}

export default function orchestrator(pi) {
  const base = (name, event, ctx) => {
    const out = { hook_event_name: name, toolName: event.toolName, toolCallId: event.toolCallId, input: event.input }
    if (event.parentToolCallId) out.parentToolCallId = event.parentToolCallId
    try {
      out.cwd = ctx.cwd
      out.sessionID = ctx.sessionManager.getSessionId()
      if (ctx.model && ctx.model.id) out.model = `${ctx.model.provider}/${ctx.model.id}`
    } catch {
      // a context without them: orchestrator refuses the call as one without a session
    }
    return out
  }

  pi.on("before_agent_start", async (event, ctx) => {
    try {
      const answer = await ask({ hook_event_name: "session.context", sessionID: ctx.sessionManager.getSessionId(),
        cwd: ctx.cwd })
      if (typeof answer.context === "string" && typeof event.systemPrompt === "string") {
        return { systemPrompt: `${event.systemPrompt}\n\n${answer.context}` }
      }
    } catch {
      // the mandate is advice; the first tool call is refused with the reason if orchestrator is unreachable
    }
  })

  pi.on("tool_call", async (event, ctx) => {
    try {
      const answer = await ask(base("tool_call", event, ctx))
      if (answer.input && typeof answer.input === "object") Object.assign(event.input, answer.input)
      return undefined
    } catch (exc) {
      return { block: true, reason: String((exc && exc.message) || exc || "orchestrator: call blocked") }
    }
  })

  pi.on("tool_result", async (event, ctx) => {
    let warning
    try {
      const answer = await ask({ ...base("tool_result", event, ctx), result: resultOf(event) })
      if (typeof answer.warning === "string") warning = answer.warning
    } catch (exc) {
      warning = `orchestrator: this call ran but could not be recorded: ${(exc && exc.message) || exc}`
    }
    if (warning === undefined) return undefined
    const content = [...(Array.isArray(event.content) ? event.content : []), { type: "text", text: `\n\n${warning}` }]
    return event.structuredContent === undefined ? { content } : { content, structuredContent: event.structuredContent }
  })
}
