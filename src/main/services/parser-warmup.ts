/** For a face about to read a workload: the parser thread starts while the face loads the rest. */
export { prestartWorkloadParser } from '../workload/bounded-parse';
