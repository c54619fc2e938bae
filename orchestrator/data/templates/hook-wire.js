// ---- the wire client (orchestrator/data/templates/hook-wire.js, the same in every plugin orchestrator writes) ----
const AGENT = "@ORCH_AGENT@"
// <root>/<.opencode|.kilo>/plugin/orchestrator.js, <root>/.pi/extensions/orchestrator.js -> <root>
const ROOT = dirname(dirname(dirname(fileURLToPath(import.meta.url))))
const SOCKET = join(ROOT, ".orchestration", "run", "orch.sock")
const LAUNCHER = join(ROOT, ".orchestration", "bin", "orch-hook")
const CONNECT_MS = 500
// a person may be deciding in `orch tui`: as long as the hook client waits (ORCH_HOOK_TIMEOUT, seconds)
const ANSWER_MS = 1000 * Number(process.env.ORCH_HOOK_TIMEOUT || 600)

const blocked = (why) => new Error(`orchestrator: ${why}; this call is blocked (fail closed)`)

// the wire format of orchestrator/hookclient.py: "ORCH1 <agent>", the ORCH_* variables, an empty line, the event
function request(raw) {
  const lines = [`ORCH1 ${AGENT}`]
  for (const [key, value] of Object.entries(process.env)) {
    if (key.startsWith("ORCH_") && !key.includes("=") && typeof value === "string" && !value.includes("\n")) {
      lines.push(`${key}=${value}`)
    }
  }
  return Buffer.concat([Buffer.from(lines.join("\n") + "\n\n"), Buffer.from(raw)])
}

// "<exit> <len stdout> <len stderr>\n" + both bodies; null when malformed
function decode(data) {
  const nl = data.indexOf(10)
  const parts = nl < 0 ? [] : data.subarray(0, nl).toString().split(" ")
  if (parts.length !== 3 || !parts.every((p) => /^\d+$/.test(p))) return null
  const [code, nOut, nErr] = parts.map(Number)
  const body = data.subarray(nl + 1)
  if ((code !== 0 && code !== 2) || body.length !== nOut + nErr) return null
  return { code, out: body.subarray(0, nOut).toString(), err: body.subarray(nOut).toString() }
}

// one request over the daemon socket; null when there is no usable daemon (the launcher answers instead)
function askDaemon(raw) {
  return new Promise((resolve) => {
    const chunks = []
    let done = false
    const finish = (answer) => {
      if (done) return
      done = true
      clearTimeout(timer)
      sock.destroy()
      resolve(answer)
    }
    const sock = createConnection({ path: SOCKET })
    let timer = setTimeout(() => finish(null), CONNECT_MS)
    sock.on("connect", () => {
      clearTimeout(timer)
      timer = setTimeout(() => finish(null), ANSWER_MS)
      sock.end(request(raw))
    })
    sock.on("data", (chunk) => chunks.push(chunk))
    sock.on("end", () => finish(decode(Buffer.concat(chunks))))
    sock.on("error", () => finish(null))
  })
}

// the committed launcher, the event on stdin: it evaluates the call (and starts a daemon for the next ones)
function askLauncher(raw) {
  return new Promise((resolve, reject) => {
    const out = []
    const err = []
    let child
    try {
      child = spawn(LAUNCHER, [AGENT], { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] })
    } catch (exc) {
      reject(blocked(`cannot run the hook launcher .orchestration/bin/orch-hook (${exc && exc.message})`))
      return
    }
    const timer = setTimeout(() => child.kill("SIGKILL"), ANSWER_MS)
    child.on("error", (exc) => {
      clearTimeout(timer)
      reject(blocked(`the hook launcher .orchestration/bin/orch-hook is missing or not executable (${exc.code || exc.message}); ` +
        `restore it (git checkout .orchestration/bin/orch-hook, or orch install ${AGENT}) and run orch doctor`))
    })
    child.stdout.on("data", (chunk) => out.push(chunk))
    child.stderr.on("data", (chunk) => err.push(chunk))
    child.stdin.on("error", () => {})
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code: signal ? -1 : code, out: Buffer.concat(out).toString(), err: Buffer.concat(err).toString(),
        signal })
    })
    child.stdin.end(raw)
  })
}

// orchestrator's answer as an object; throws (the caller blocks the call) on a refusal or any failure
async function ask(event) {
  const raw = JSON.stringify(event)
  const answer = (await askDaemon(raw)) || (await askLauncher(raw))
  if (answer.code === 2) throw new Error((answer.err || answer.out).trim() || "orchestrator: call blocked")
  if (answer.code !== 0) {
    const why = answer.signal ? `was killed (${answer.signal})` : `failed (exit ${answer.code})`
    throw blocked(`the hook launcher ${why}: ${(answer.err || answer.out).trim().slice(-600)}`)
  }
  let parsed
  try {
    parsed = JSON.parse(answer.out || "{}")
  } catch {
    throw blocked(`unreadable answer ${JSON.stringify(answer.out.slice(0, 200))}`)
  }
  if (typeof parsed !== "object" || parsed === null) throw blocked("unreadable answer")
  if (typeof parsed.deny === "string") throw new Error(parsed.deny)
  return parsed
}
// ---- end of the wire client ----
