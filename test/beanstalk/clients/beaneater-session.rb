# A producer/worker session with Debian's unmodified ruby-beaneater against
# orq's beanstalkd port (run by test/beanstalk/clients.test.ts, which passes
# the port). Prints "ok" and exits 0, or names the first check that failed.

require "beaneater"

def check(what, actual, expected)
  return if actual == expected
  warn "#{what}: expected #{expected.inspect}, got #{actual.inspect}"
  exit 1
end

beanstalk = Beaneater.new("127.0.0.1:#{ARGV.fetch(0)}")
tube = beanstalk.tubes["rb-jobs"]
first = tube.put("first", pri: 50, ttr: 30)
second = tube.put("second", pri: 10, ttr: 30)
check("put status", first[:status], "INSERTED")
beanstalk.tubes.watch!("rb-jobs")
check("watched", beanstalk.tubes.watched.map(&:name), ["rb-jobs"])

job = beanstalk.tubes.reserve(5)
check("best first", [job.id.to_s, job.body], [second[:id].to_s, "second"])
job.release(pri: 100)
job = beanstalk.tubes.reserve(5)
check("released job goes behind", job.body, "first")
job.bury(pri: 7)
check("buried", tube.peek(:buried).body, "first")
check("stats-job after bury", [job.stats.state, job.stats.pri, job.stats.buries], ["buried", 7, 1])
tube.kick(5)
check("kicked to ready", tube.stats.current_jobs_ready, 2)
2.times do
  reserved = beanstalk.tubes.reserve(5)
  reserved.delete
end
check("tube empty", tube.stats.current_jobs_ready, 0)
check("deletes counted", tube.stats.cmd_delete, 2)
check("max job size", beanstalk.stats.max_job_size, 65_535)
beanstalk.close
puts "ok"
