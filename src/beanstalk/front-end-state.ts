// What the beanstalkd port keeps beside the engine: which tubes connections
// use, watch and wait on (a tube exists while referenced, while it holds jobs,
// or, like beanstalkd's, when it is `default`), the counters of `stats` and
// `stats-tube` (since this process started, as beanstalkd's are), and the
// per-job counters orq's items do not carry (releases, buries, kicks,
// timeouts, last delay), bounded by limits.beanstalkJobCountersMax.

import { ReservationBook } from "./reservation-book.ts";
import type { Reservation } from "./session.ts";

export interface TubeCounters {
  using: number;
  watching: number;
  waiting: number;
  totalJobs: number;
  cmdDelete: number;
  cmdPauseTube: number;
  /** Seconds of the last pause-tube (beanstalkd's `pause`, shown while the topic is paused). */
  pauseSeconds: number;
}

export interface JobCounters {
  releases: number;
  buries: number;
  kicks: number;
  timeouts: number;
  /** The delay of the last put or release, in seconds, when known. */
  delaySeconds: number | null;
}

export class FrontEndState {
  private readonly tubes = new Map<string, TubeCounters>();
  private readonly jobs = new Map<string, JobCounters>();
  readonly commands = new Map<string, number>();
  readonly reservations = new ReservationBook();
  jobTimeouts = 0;
  totalJobs = 0;
  connections = 0;
  totalConnections = 0;
  producers = 0;
  workers = 0;
  waiting = 0;
  draining = false;

  constructor(
    private readonly jobCountersMax: number,
    readonly startedAtMs: number,
    /** beanstalkd's random per-process id (16 hex digits). */
    readonly instanceId: string,
  ) {}

  /** Forget reservations whose TTR has ended, counting each as a timeout. */
  sweepReservations(nowMs: number): void {
    this.reservations.sweep(nowMs, this.countTimeout);
  }

  private readonly countTimeout = (reservation: Reservation): void => {
    this.jobTimeouts++;
    this.job(reservation.orqId).timeouts++;
  };

  countCommand(name: string): void {
    this.commands.set(name, (this.commands.get(name) ?? 0) + 1);
  }

  tube(name: string): TubeCounters {
    let tube = this.tubes.get(name);
    if (tube === undefined) {
      tube = { using: 0, watching: 0, waiting: 0, totalJobs: 0, cmdDelete: 0, cmdPauseTube: 0, pauseSeconds: 0 };
      this.tubes.set(name, tube);
    }
    return tube;
  }

  /** The counters of a tube seen before, without creating them. */
  knownTube(name: string): TubeCounters | undefined {
    return this.tubes.get(name);
  }

  /** Tubes some connection uses or watches. */
  referencedTubes(): string[] {
    const names: string[] = [];
    for (const [name, tube] of this.tubes) if (tube.using > 0 || tube.watching > 0) names.push(name);
    return names;
  }

  job(orqId: string): JobCounters {
    let job = this.jobs.get(orqId);
    if (job === undefined) {
      if (this.jobs.size >= this.jobCountersMax) {
        const oldest = this.jobs.keys().next().value as string;
        this.jobs.delete(oldest);
      }
      job = { releases: 0, buries: 0, kicks: 0, timeouts: 0, delaySeconds: null };
      this.jobs.set(orqId, job);
    }
    return job;
  }

  knownJob(orqId: string): JobCounters | undefined {
    return this.jobs.get(orqId);
  }

  forgetJob(orqId: string): void {
    this.jobs.delete(orqId);
  }
}
