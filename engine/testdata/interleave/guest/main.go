// Command guest has a check-then-act race between goroutines across a channel handoff,
// the kind of bug that only a different goroutine interleaving shows.
//
// Two tellers take turns on one account. A teller checks the balance (check), hands the
// debit to the ledger goroutine over a channel and passes the turn to the next teller,
// assuming that the ledger applied the debit when it took it (act). It has not,
// necessarily: the ledger is only ready to run. Go's wasip1 runtime runs ready
// goroutines in FIFO order, and the ledger, readied before the next teller, always
// applies the debit first: the program passes on every seed. When the next teller runs
// first, both tellers see the full balance, both withdraw, and the account is overdrawn.
//
// With -fixed a teller waits for the ledger's acknowledgement before it passes the turn
// (the negative control: no interleaving overdraws it).
package main

import (
	"flag"
	"fmt"
	"os"
	"sync"
)

const (
	rounds   = 4
	tellers  = 2
	opening  = 100
	withdraw = 60 // only one teller's withdrawal fits
)

func main() {
	fixed := flag.Bool("fixed", false, "wait for the ledger's acknowledgement before passing the turn")
	flag.Parse()
	for r := 1; r <= rounds; r++ {
		if bal := round(r, *fixed); bal < 0 {
			fmt.Printf("round %d: account overdrawn: balance %d\n", r, bal)
			os.Exit(1)
		}
	}
	fmt.Println("every round kept the balance >= 0")
}

// round runs one round and returns the closing balance.
func round(r int, fixed bool) int {
	balance := opening
	debits := make(chan int)
	acks := make(chan struct{})
	ledgerDone := make(chan struct{})
	go func() { // the ledger: the only goroutine that writes the balance
		for amt := range debits {
			balance -= amt
			if fixed {
				acks <- struct{}{}
			}
		}
		close(ledgerDone)
	}()

	turns := make([]chan struct{}, tellers+1)
	for i := range turns {
		turns[i] = make(chan struct{})
	}
	var waiting sync.WaitGroup
	waiting.Add(tellers)
	for t := 0; t < tellers; t++ {
		go func() {
			waiting.Done()
			<-turns[t]
			if balance >= withdraw { // check
				fmt.Printf("round %d: teller %d sees %d, withdraws %d\n", r, t, balance, withdraw)
				debits <- withdraw // act, by the ledger
				if fixed {
					<-acks
				}
			} else {
				fmt.Printf("round %d: teller %d sees %d, declines\n", r, t, balance)
			}
			turns[t+1] <- struct{}{}
		}()
	}
	waiting.Wait()
	turns[0] <- struct{}{}
	<-turns[tellers]
	close(debits)
	<-ledgerDone
	return balance
}
