// Counts what the public HTTP caching tests' client printed (a JSON object of results by test
// id): its required tests passed, and the ids of those that were not. A test is judged by its own
// result, as the published figures count (HONOR_DEPENDENCIES=1 fails it with a test it needs).
//
//   node bench/cache_tests_summary.mjs SUITE_DIR RESULTS.json
import fs from 'fs'
import path from 'path'
import { pathToFileURL } from 'url'

const [suite, resultsFile] = process.argv.slice(2)
const tests = (await import(pathToFileURL(path.join(suite, 'tests/index.mjs')))).default
const { determineTestResult, resultTypes } = await import(pathToFileURL(path.join(suite, 'test-engine/lib/results.mjs')))
const results = JSON.parse(fs.readFileSync(resultsFile, 'utf8'))
let required = 0
let passed = 0
const missed = []
for (const testSuite of tests) {
  for (const test of testSuite.tests) {
    if (test.browser_only === true) continue
    if (test.kind !== undefined && test.kind !== 'required') continue
    required += 1
    const result = determineTestResult(tests, test.id, results, process.env.HONOR_DEPENDENCIES === "1")
    if (result === resultTypes.pass) passed += 1
    else missed.push(test.id)
  }
}
console.log(JSON.stringify({ required, passed, missed }))
